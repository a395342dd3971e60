// Home page: shows whether /healthz answers ok and whether /metrics is served here.
"use strict";

(function () {
  async function probe(url, node, okText) {
    try {
      const response = await fetch(url, { headers: { Accept: "application/json, text/plain" } });
      node.textContent = response.ok ? okText(response) : `not available (HTTP ${response.status})`;
      node.classList.add(response.ok ? "ok" : "bad");
    } catch (error) {
      node.textContent = "unreachable";
      node.classList.add("bad");
    }
  }
  probe("/healthz", document.getElementById("health"), () => "ok");
  probe("/metrics", document.getElementById("metrics"), () => "served");
})();
