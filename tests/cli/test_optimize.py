"""``assetgate optimize`` on a folder of generated images, damaged ones included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from assetgate.cli import main
from assetgate.cli.optimize import IMAGE_PARAMS, flag
from assetgate.optimizer.params import PARAMS


def image(path: Path, size: tuple[int, int], colour: tuple[int, int, int], fmt: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, colour).save(path, fmt)
    return path


@pytest.fixture
def src(tmp_path: Path) -> Path:
    folder = tmp_path / "src"
    image(folder / "a.jpg", (200, 100), (255, 0, 0), "JPEG")
    image(folder / "sub" / "b.png", (64, 64), (0, 0, 255), "PNG")
    (folder / "broken.jpg").write_bytes(b"\xff\xd8\xff\xe0 not a jpeg at all" * 8)
    whole = image(tmp_path / "whole.png", (300, 300), (0, 255, 0), "PNG").read_bytes()
    (folder / "cut.png").write_bytes(whole[: len(whole) // 2])
    (folder / "notes.txt").write_text("not an image")
    return folder


def test_every_image_parameter_has_its_flag() -> None:
    image_names = {param.name for param in PARAMS if param.image}
    assert {param.name for param in IMAGE_PARAMS} == image_names
    assert flag("crop_gravity") == "--crop-gravity"


def test_folder_with_damaged_files(
    src: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dest = tmp_path / "out"
    status = main(["optimize", str(src), str(dest), "--width", "50", "--format", "webp",
                   "--flop", "--quality", "80"])  # fmt: skip
    assert status == 1
    with Image.open(dest / "a.webp") as a:
        assert (a.format, a.size) == ("WEBP", (50, 25))
    with Image.open(dest / "sub" / "b.webp") as b:
        assert (b.format, b.size) == ("WEBP", (50, 50))
        assert b.convert("RGB").getpixel((25, 25))[2] > 200
    assert sorted(p.name for p in dest.rglob("*") if p.is_file()) == ["a.webp", "b.webp"]
    out = capsys.readouterr().out
    assert "broken.jpg" in out
    assert "cut.png" in out
    assert "notes.txt" not in out
    rows = [[c.strip() for c in line.strip().strip("│").split("│")] for line in out.splitlines()]
    cells = next(row for row in rows if row[0] == "4")
    before = (src / "a.jpg").stat().st_size + (src / "sub" / "b.png").stat().st_size
    after = (dest / "a.webp").stat().st_size + (dest / "sub" / "b.webp").stat().st_size
    # files, optimized, kept as is, failed, outputs, bytes before, bytes after
    assert cells[:7] == ["4", "2", "0", "2", "2", str(before), str(after)]


def test_srcset_variants_keep_the_input_format(
    src: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (src / "broken.jpg").unlink()
    (src / "cut.png").unlink()
    dest = tmp_path / "out"
    assert main(["optimize", str(src), str(dest), "--srcset", "32,100,20"]) == 0
    sizes = {}
    for path in dest.rglob("*.*"):
        with Image.open(path) as opened:
            sizes[str(path.relative_to(dest))] = (opened.format, opened.size)
    assert sizes == {
        "a-20w.jpg": ("JPEG", (20, 10)),
        "a-32w.jpg": ("JPEG", (32, 16)),
        "a-100w.jpg": ("JPEG", (100, 50)),
        "sub/b-20w.png": ("PNG", (20, 20)),
        "sub/b-32w.png": ("PNG", (32, 32)),
        "sub/b-64w.png": ("PNG", (64, 64)),  # never enlarged: labelled by its real width
    }
    assert "failures" not in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--width", "0"], "assetgate: --width: expected an integer 1..50000, got '0'"),
        (["--crop-gravity", "up"], "assetgate: --crop-gravity: expected one of"),
        (["--srcset", "10,x"], "assetgate: --srcset: expected comma-separated widths"),
    ],
)
def test_bad_flag_is_one_line_and_status_2(
    src: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(["optimize", str(src), str(tmp_path / "out"), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message)
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def rows_of(out: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip().strip("│").split("│")] for line in out.splitlines()]


def test_srcset_labels_each_variant_by_its_real_width(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 300 px source asked for 320, 640 and 1280 is one 300w file, not three copies that
    claim widths a browser would trust."""
    src = tmp_path / "src"
    image(src / "tiny.png", (300, 200), (0, 128, 255), "PNG")
    image(src / "big.png", (1000, 500), (255, 128, 0), "PNG")
    dest = tmp_path / "out"
    status = main(["optimize", str(src), str(dest), "--srcset", "320,640,1280", "--format", "webp"])
    assert status == 0
    sizes = {}
    for path in sorted(dest.rglob("*.*")):
        with Image.open(path) as opened:
            sizes[path.name] = opened.size
    assert sizes == {
        "big-320w.webp": (320, 160),
        "big-640w.webp": (640, 320),
        "big-1000w.webp": (1000, 500),
        "tiny-300w.webp": (300, 200),
    }
    cells = next(row for row in rows_of(capsys.readouterr().out) if row[0] == "2")
    assert cells[:5] == ["2", "2", "0", "0", "4"]


def test_a_damaged_file_is_one_failure_whatever_the_widths(
    src: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dest = tmp_path / "out"
    assert main(["optimize", str(src), str(dest), "--srcset", "16,32,48"]) == 1
    out = capsys.readouterr().out
    failures = out[out.index("failures") :]
    assert failures.count("broken.jpg") == 1
    assert failures.count("cut.png") == 1
    assert not list(dest.glob("broken*"))
    assert not list(dest.glob("cut*"))
    cells = next(row for row in rows_of(out) if row[0] == "4")
    assert cells[:5] == ["4", "2", "0", "2", "6"]  # files, optimized, kept, failed, outputs


def test_no_transformation_decodes_every_file_and_keeps_what_it_cannot_shrink(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No flags: each file is decoded (a truncated JPEG fails, exit 1), re-encoded at quality 85
    and written only when that is smaller; otherwise the original is kept and the run says so."""
    src = tmp_path / "src"
    noisy = Image.effect_noise((320, 240), 60).convert("RGB")
    src.mkdir()
    noisy.save(src / "heavy.jpg", "JPEG", quality=100)  # 85 is much smaller
    noisy.save(src / "light.jpg", "JPEG", quality=30)  # 85 would be bigger: kept
    whole = (src / "heavy.jpg").read_bytes()
    (src / "truncated.jpg").write_bytes(whole[: len(whole) * 2 // 3])
    dest = tmp_path / "out"
    assert main(["optimize", str(src), str(dest)]) == 1
    out = capsys.readouterr().out
    heavy, light = (dest / "heavy.jpg").read_bytes(), (dest / "light.jpg").read_bytes()
    assert len(heavy) < len(whole) * 0.8
    with Image.open(dest / "heavy.jpg") as opened:
        assert (opened.format, opened.size) == ("JPEG", (320, 240))
    assert light == (src / "light.jpg").read_bytes()
    assert not (dest / "truncated.jpg").exists()
    assert "truncated.jpg" in out[out.index("failures") :]
    kept = out[out.index("kept as they were") : out.index("failures")]
    assert "light.jpg" in kept
    assert "re-encoded at quality 85 it was not smaller" in kept
    assert "heavy.jpg" not in kept
    cells = next(row for row in rows_of(out) if row[0] == "3")
    assert cells[:5] == ["3", "1", "1", "1", "2"]


def test_extensions_on_the_command_line(
    src: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue-25 flags come from the table too: info writes JSON, a watermark is stamped."""
    (src / "broken.jpg").unlink()
    (src / "cut.png").unlink()
    root = tmp_path / "root"
    image(root / "logo.png", (20, 20), (0, 255, 0), "PNG")
    monkeypatch.setenv("ASSETGATE_ROOT", str(root))
    monkeypatch.setenv(
        "ASSETGATE_WATERMARKS", '{"logo": {"path": "logo.png", "gravity": "northwest"}}'
    )
    info = tmp_path / "info"
    assert main(["optimize", str(src), str(info), "--info", "1"]) == 0
    assert json.loads((info / "a.json").read_text())["width"] == 200
    stamped = tmp_path / "stamped"
    flags = ["--watermark", "logo", "--dpr", "2", "--width", "50", "--height", "50", "--fit",
             "pad", "--format", "png"]  # fmt: skip
    assert main(["optimize", str(src), str(stamped), *flags]) == 0
    with Image.open(stamped / "a.png") as a:
        assert a.size == (100, 100)
        assert a.convert("RGB").getpixel((5, 5))[1] > 200  # the green logo, top left
    monkeypatch.setenv("ASSETGATE_WATERMARKS", '{"logo": {"path": "missing.png"}}')
    assert main(["optimize", str(src), str(tmp_path / "x"), "--width", "5"]) == 2


def test_quality_auto_reports_bytes_and_the_worst_score(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Real images (tests/data/corpus): every written file scores, the worst is printed."""
    import shutil

    import pyvips

    from assetgate.imaging.ssimulacra2 import ssimulacra2

    monkeypatch.delenv("ASSETGATE_AUTO_QUALITY_TARGET", raising=False)
    corpus = Path(__file__).parent.parent / "data" / "corpus"
    src = tmp_path / "src"
    src.mkdir()
    for name in ("photo-rocket.jpg", "alpha-horse.png"):
        shutil.copyfile(corpus / name, src / name)
    dest = tmp_path / "out"
    status = main(["optimize", str(src), str(dest), "--quality", "auto", "--format", "jpeg",
                   "--jobs", "1"])  # fmt: skip
    assert status == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("quality=auto"))
    worst = float(line.split("worst SSIMULACRA2 score ")[1].split(" ")[0])
    assert worst >= 74
    assert "2 scored" in line
    rocket = pyvips.Image.new_from_file(str(dest / "photo-rocket.jpg"))
    source = pyvips.Image.new_from_file(str(src / "photo-rocket.jpg"))
    assert ssimulacra2(source, rocket) >= worst - 0.01
    before = sum((src / n).stat().st_size for n in ("photo-rocket.jpg", "alpha-horse.png"))
    after = sum(p.stat().st_size for p in dest.iterdir())
    assert str(before) in out  # the summary's bytes before and after
    assert str(after) in out


def test_quality_auto_refuses_a_bad_score(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["optimize", str(tmp_path), str(tmp_path / "o"), "--quality", "auto:5"]) == 2
    assert "--quality: expected an integer 0..100, auto, or auto:" in capsys.readouterr().err
