// Helpers shared by the /ui/ pages: byte formatting, error bodies in words, copy to clipboard.
// Everything shown from an answer goes through textContent, never innerHTML.
"use strict";

window.ui = (function () {
  function bytes(n) {
    if (n === null || n === undefined || Number.isNaN(n)) return "–";
    if (n < 1024) return `${n} B`;
    if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
    return `${(n / 1024 / 1024).toFixed(2)} MiB`;
  }

  function saved(before, after) {
    if (!before) return "–";
    return `${(((before - after) * 100) / before).toFixed(1)} %`;
  }

  // The service's JSON error ({"error", "code", "error_id"?}) as one sentence.
  async function errorText(response) {
    let message = `HTTP ${response.status}`;
    try {
      const data = await response.json();
      if (data && typeof data.error === "string") {
        message = data.error;
        if (typeof data.error_id === "string") message += ` (reference ${data.error_id})`;
      }
    } catch (error) {
      // Not JSON: keep the status.
    }
    return message;
  }

  function retryAfter(response) {
    const value = Number.parseInt(response.headers.get("Retry-After") || "", 10);
    return Number.isFinite(value) && value > 0 ? value : 1;
  }

  function copyButton(button, source, status) {
    button.addEventListener("click", () => {
      navigator.clipboard.writeText(source.textContent).then(
        () => { status.textContent = "Copied."; },
        () => { status.textContent = "Copy failed: select the text and copy it by hand."; },
      );
    });
  }

  function element(tag, text, className) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (className) node.className = className;
    return node;
  }

  // A help text of /openapi.json as nodes: `code` spans (Markdown backticks) become <code>, the
  // rest text; nothing is parsed as HTML.
  function inline(text) {
    const fragment = document.createDocumentFragment();
    String(text ?? "").split("`").forEach((part, index) => {
      if (!part) return;
      fragment.appendChild(index % 2 ? element("code", part) : document.createTextNode(part));
    });
    return fragment;
  }

  return { bytes, saved, errorText, retryAfter, copyButton, element, inline };
})();
