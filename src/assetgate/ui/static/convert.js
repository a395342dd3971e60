// Convert page: each dropped or chosen file is posted to /api/convert on its own (so every file
// gets its own result or error), with upload progress; "Download all as ZIP" posts the converted
// ones together and saves the ZIP the service answers.
"use strict";

(function () {
  const { bytes, saved, element, retryAfter } = window.ui;
  const drop = document.getElementById("drop");
  const picker = document.getElementById("files");
  const quality = document.getElementById("quality");
  const lossless = document.getElementById("lossless");
  const status = document.getElementById("status");
  const body = document.querySelector("#results tbody");
  const zipButton = document.getElementById("zip");
  const zipProgress = document.getElementById("zip-progress");
  const converted = []; // source File objects that converted fine, in upload order
  let queue = Promise.resolve();

  function webpName(name) {
    const stem = name.replace(/^.*[\\/]/, "").replace(/\.[^.]*$/, "") || "image";
    return `${stem}.webp`;
  }

  function formFor(files) {
    const form = new FormData();
    for (const file of files) form.append("images", file, file.name);
    form.append("quality", quality.value || "85");
    form.append("lossless", lossless.checked ? "1" : "0");
    return form;
  }

  // XMLHttpRequest, because fetch() reports no upload progress.
  function post(files, progress) {
    return new Promise((resolve) => {
      const xhr = new XMLHttpRequest();
      xhr.open("POST", "/api/convert");
      xhr.responseType = "blob";
      xhr.upload.addEventListener("progress", (event) => {
        if (event.lengthComputable) progress.value = event.loaded / event.total;
      });
      xhr.addEventListener("load", () => resolve(xhr));
      xhr.addEventListener("error", () => resolve(null));
      xhr.send(formFor(files));
    });
  }

  async function failure(xhr) {
    if (xhr === null) return "the service could not be reached";
    if (xhr.status === 429) {
      const wait = retryAfter({ headers: { get: (name) => xhr.getResponseHeader(name) } });
      return `too many requests: wait ${wait} s and drop it again`;
    }
    try {
      const data = JSON.parse(await xhr.response.text());
      return data.error || `HTTP ${xhr.status}`;
    } catch (error) {
      return `HTTP ${xhr.status}`;
    }
  }

  async function convertOne(file) {
    const row = element("tr");
    const cells = {
      name: element("td", file.name), before: element("td", bytes(file.size), "num"),
      after: element("td", "–", "num"), saved: element("td", "–", "num"), result: element("td"),
      preview: element("td"),
    };
    const progress = element("progress");
    progress.max = 1;
    progress.value = 0;
    cells.result.appendChild(progress);
    row.append(...Object.values(cells));
    row.className = "pending";
    body.appendChild(row);
    const xhr = await post([file], progress);
    cells.result.replaceChildren();
    if (xhr === null || xhr.status !== 200) {
      row.className = "failed";
      cells.result.appendChild(element("span", await failure(xhr), "error"));
      return;
    }
    const blob = xhr.response;
    const url = URL.createObjectURL(blob);
    row.className = "converted";
    cells.after.textContent = bytes(blob.size);
    cells.saved.textContent = saved(file.size, blob.size);
    const link = element("a", `Download ${webpName(file.name)}`);
    link.href = url;
    link.download = webpName(file.name);
    cells.result.appendChild(link);
    const thumb = element("img", null, "thumb");
    thumb.alt = `${file.name} as WebP`;
    thumb.src = url;
    cells.preview.appendChild(thumb);
    converted.push(file);
    zipButton.disabled = converted.length < 2;
  }

  function add(files) {
    const list = Array.from(files);
    if (!list.length) return;
    status.textContent = `Converting ${list.length} file${list.length === 1 ? "" : "s"}…`;
    for (const file of list) queue = queue.then(() => convertOne(file));
    queue = queue.then(() => {
      const failed = body.querySelectorAll("tr.failed").length;
      status.textContent = `${converted.length} converted, ${failed} failed.`;
    });
  }

  async function downloadZip() {
    zipButton.disabled = true;
    zipProgress.hidden = false;
    status.textContent = `Building a ZIP of ${converted.length} files…`;
    const xhr = await post(converted, zipProgress);
    zipProgress.hidden = true;
    zipButton.disabled = converted.length < 2;
    if (xhr === null || xhr.status !== 200) {
      status.textContent = `ZIP failed: ${await failure(xhr)}`;
      return;
    }
    const before = converted.reduce((sum, file) => sum + file.size, 0);
    const link = element("a");
    link.href = URL.createObjectURL(xhr.response);
    link.download = "images.zip";
    document.body.appendChild(link);
    link.click();
    link.remove();
    status.textContent =
      `ZIP of ${converted.length} files: ${bytes(before)} before, ${bytes(xhr.response.size)} after.`;
  }

  picker.addEventListener("change", () => {
    add(picker.files);
    picker.value = "";
  });
  for (const name of ["dragenter", "dragover"]) {
    drop.addEventListener(name, (event) => {
      event.preventDefault();
      drop.classList.add("over");
    });
  }
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (event) => {
    event.preventDefault();
    drop.classList.remove("over");
    if (event.dataTransfer) add(event.dataTransfer.files);
  });
  zipButton.addEventListener("click", downloadZip);
})();
