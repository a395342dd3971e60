// The peer for bench/quality.py: sharp encodes lossless PNGs at a list of qualities.
// argv: a JSON file of jobs [{src, format, quality, out}]; each is encoded with sharp's
// settings as the issue names them: JPEG with mozjpeg: true, WebP at effort 4, AVIF at the
// effort the bench passes (assetgate's). Prints one JSON line {cpu_ms} when done.
import { readFileSync, writeFileSync } from "node:fs";
import sharp from "sharp";

const [jobsFile, avifEffort] = process.argv.slice(2);
const jobs = JSON.parse(readFileSync(jobsFile, "utf8"));
sharp.concurrency(1);
sharp.cache(false);

const cpu0 = process.cpuUsage();
for (const job of jobs) {
  let pipeline = sharp(job.src);
  if (job.format === "jpeg") {
    pipeline = pipeline.flatten({ background: "#ffffff" }).jpeg({ quality: job.quality, mozjpeg: true });
  } else if (job.format === "webp") {
    pipeline = pipeline.webp({ quality: job.quality, effort: 4 });
  } else {
    pipeline = pipeline.avif({ quality: job.quality, effort: Number(avifEffort) });
  }
  writeFileSync(job.out, await pipeline.toBuffer());
}
const cpu = process.cpuUsage(cpu0);
console.log(JSON.stringify({ cpu_ms: (cpu.user + cpu.system) / 1000 }));
