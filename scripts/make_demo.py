"""Regenerate the packaged demo document root (src/assetgate/demo): small images, CSS and JS.

Run from the repository root: ``.venv/bin/python scripts/make_demo.py``. Everything is drawn
from formulas, so the files are reproducible and carry no third-party content.
"""

from __future__ import annotations

import io
from pathlib import Path

import pyvips
from PIL import Image

DEMO = Path(__file__).resolve().parents[1] / "src" / "assetgate" / "demo"


def landscape(width: int, height: int) -> pyvips.Image:
    """A sunset-ish gradient with rolling hills: smooth areas and edges, like a photo."""
    xy = pyvips.Image.xyz(width, height)
    x, y = xy[0] / width, xy[1] / height
    # libvips' sin() takes degrees.
    hills = ((x * 520.0).sin() * 0.06 + (x * 1300.0 + 60.0).sin() * 0.02 + 0.62) < y
    sky_r = 255 - y * 90
    sky_g = 150 + y * 60
    sky_b = 90 + y * 140
    sky = sky_r.bandjoin([sky_g, sky_b])
    ground = (40 + x * 30).bandjoin([110 - y * 40, 60 + x * 20])
    distance = ((xy[0] - 0.72 * width) ** 2 + (xy[1] - 0.3 * height) ** 2) ** 0.5
    sun = (distance < 0.08 * width).ifthenelse([255, 235, 150], sky)
    image = hills.ifthenelse(ground, sun)
    noise = pyvips.Image.gaussnoise(width, height, sigma=6, mean=0)
    return (image + noise).cast("uchar").copy(interpretation="srgb")


def badge(size: int) -> pyvips.Image:
    """A round badge on a transparent background (alpha edges for PNG/WebP demos)."""
    xy = pyvips.Image.xyz(size, size)
    r = ((xy[0] - size / 2) ** 2 + (xy[1] - size / 2) ** 2) ** 0.5
    alpha = (size * 0.45 - r).linear(128, 0).cast("uchar")
    colour = (xy[0] * 255 / size).bandjoin([xy[1] * 255 / size, 255 - xy[0] * 255 / size])
    return colour.cast("uchar").bandjoin(alpha).copy(interpretation="srgb")


def spinner_frames(size: int, count: int) -> list[Image.Image]:
    frames = []
    for index in range(count):
        frame = badge(size).rot("d0")
        angle = 360 * index / count
        frame = frame.similarity(angle=angle, background=[0, 0, 0, 0])
        frame = frame.crop((frame.width - size) // 2, (frame.height - size) // 2, size, size)
        data = frame.write_to_memory()
        frames.append(Image.frombytes("RGBA", (size, size), data))
    return frames


def main() -> None:
    DEMO.mkdir(parents=True, exist_ok=True)
    photo = landscape(960, 640)
    photo.jpegsave(str(DEMO / "landscape.jpg"), Q=80, keep="none", optimize_coding=True)
    photo.thumbnail_image(480).webpsave(str(DEMO / "landscape.webp"), Q=75, keep="none")
    photo.thumbnail_image(320).tiffsave(str(DEMO / "landscape.tiff"), compression="jpeg")
    Image.frombytes("RGB", (160, 107), photo.thumbnail_image(160).write_to_memory()).save(
        DEMO / "small.bmp"
    )
    badge(160).pngsave(str(DEMO / "badge.png"), compression=9, keep="none")
    frames = spinner_frames(96, 8)
    buffer = io.BytesIO()
    frames[0].save(
        buffer,
        format="GIF",
        save_all=True,
        append_images=frames[1:],
        duration=80,
        loop=0,
        disposal=2,
    )
    (DEMO / "spinner.gif").write_bytes(buffer.getvalue())
    (DEMO / "demo.css").write_text(CSS)
    (DEMO / "demo.js").write_text(JS)
    (DEMO / "index.html").write_text(HTML)
    total = sum(p.stat().st_size for p in DEMO.iterdir() if p.is_file())
    print(f"demo root: {total} bytes")


CSS = """/* assetgate demo stylesheet: try /demo.css?min=1 and ?min=1&compress=1 */
body {
    font-family: system-ui, sans-serif;
    margin: 2rem auto;
    max-width: 60rem;
    color: #222;
}

figure {
    display: inline-block;
    margin: 1rem;
}

figcaption {
    font-size: 0.85rem;
    color: #555;
}
"""

JS = """/*! assetgate demo script: try /demo.js?min=1 (this licence comment stays) */
"use strict";

// Show the size of every image once it has loaded.
function describe(image) {
    const caption = image.parentElement.querySelector("figcaption");
    if (caption) {
        caption.textContent += " - " + image.naturalWidth + "x" + image.naturalHeight;
    }
}

for (const image of document.querySelectorAll("img")) {
    if (image.complete) {
        describe(image);
    } else {
        image.addEventListener("load", () => describe(image));
    }
}
"""

EXAMPLES = (
    ("landscape.jpg?width=320", "landscape.jpg?width=320"),
    ("landscape.jpg?width=320&sepia=80", "&sepia=80"),
    ("landscape.jpg?crop=400,400&width=200", "crop=400,400&width=200"),
    ("badge.png?width=128&hue=30", "badge.png?width=128&hue=30"),
    ("spinner.gif?width=64&format=webp", "spinner.gif as animated WebP"),
    ("small.bmp?format=png", "small.bmp?format=png"),
    ("landscape.tiff?width=200", "landscape.tiff?width=200"),
)
FIGURES = "\n".join(
    f'<figure><img src="{url.replace("&", "&amp;")}" alt="">'
    f"<figcaption>{text.replace('&', '&amp;')}</figcaption></figure>"
    for url, text in EXAMPLES
)
HTML = f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>assetgate demo</title>
<link rel="stylesheet" href="demo.css?min=1">
</head>
<body>
<h1>assetgate demo</h1>
<p>Every image below is one file of this folder, transformed by query parameters.</p>
{FIGURES}
<script src="demo.js?min=1"></script>
</body>
</html>
"""


if __name__ == "__main__":
    main()
