// The peer for bench/peer_sharp.py: the same resize as assetgate's optimizer, done by sharp.
// GET /healthz -> 200; GET /<file>?width=N&format=jpeg|webp -> the resized image.
// Settings mirror assetgate's defaults (passed in by the bench, read from assetgate's settings):
// JPEG quality Q with Huffman optimisation, 4:2:0 chroma and quantisation table 2 (assetgate's
// imaging.formats.FORMATS["jpeg"].saver.options; no other mozjpeg preset); WebP quality Q at effort E;
// metadata dropped (sharp's default). sharp.concurrency(1); libuv pool from UV_THREADPOOL_SIZE.
import http from "node:http";
import path from "node:path";
import sharp from "sharp";

const [root, port, quality, webpEffort, loopSeconds] = process.argv.slice(2);
const Q = Number(quality);
const EFFORT = Number(webpEffort);
sharp.concurrency(1);
sharp.cache(false); // assetgate runs with libvips' operation cache off as well

function render(file, width, format) {
  const pipeline = sharp(file).resize({ width });
  if (format === "webp") {
    return pipeline.webp({ quality: Q, effort: EFFORT }).toBuffer();
  }
  return pipeline
    .jpeg({
      quality: Q,
      optimiseCoding: true,
      chromaSubsampling: "4:2:0",
      mozjpeg: false,
      quantisationTable: 2,
    })
    .toBuffer();
}

// In-process mode (port "loop"): one chain of renders per libuv thread for loopSeconds, no HTTP;
// prints renders/s, CPU ms per render and busy cores as JSON.
if (port === "loop") {
  const file = path.join(root, "photo.jpg");
  const stop = Date.now() + Number(loopSeconds) * 1000;
  const chains = Number(process.env.UV_THREADPOOL_SIZE || "1");
  let renders = 0;
  const start = process.hrtime.bigint();
  const cpu0 = process.cpuUsage();
  const chain = async () => {
    while (Date.now() < stop) {
      await render(file, 800, "jpeg");
      renders += 1;
    }
  };
  await Promise.all(Array.from({ length: chains }, chain));
  const wall = Number(process.hrtime.bigint() - start) / 1e9;
  const used = process.cpuUsage(cpu0);
  const cpu = (used.user + used.system) / 1e6;
  console.log(JSON.stringify({ rate: renders / wall, cpu_ms: (1000 * cpu) / renders, busy: cpu / wall }));
  process.exit(0);
}

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, "http://peer");
  if (url.pathname === "/healthz") {
    res.writeHead(200, { "content-type": "text/plain" });
    res.end("ok");
    return;
  }
  const format = url.searchParams.get("format") === "webp" ? "webp" : "jpeg";
  const width = Number(url.searchParams.get("width") || "800");
  const file = path.join(root, path.basename(url.pathname));
  try {
    const body = await render(file, width, format);
    res.writeHead(200, { "content-type": `image/${format}`, "content-length": body.length });
    res.end(body);
  } catch (error) {
    res.writeHead(500, { "content-type": "text/plain" });
    res.end(String(error));
  }
});
server.keepAliveTimeout = 60_000;
server.listen(Number(port), "127.0.0.1");
