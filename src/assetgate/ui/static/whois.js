// Whois page: /api/whois/json as a table, /api/whois (the raw text) on demand, errors in words.
// The looked-up domain lives in this page's address (?domain=), so a link repeats the lookup.
"use strict";

(function () {
  const { element, errorText, retryAfter } = window.ui;
  const form = document.getElementById("whois-form");
  const input = document.getElementById("domain");
  const status = document.getElementById("status");
  const table = document.getElementById("record");
  const body = table.querySelector("tbody");
  const rawButton = document.getElementById("show-raw");
  const raw = document.getElementById("raw");
  const LABELS = {
    domain: "Domain", domain_unicode: "Domain (Unicode)", tld: "Top-level domain",
    registered: "Registered", registrar: "Registrar", dates: "Dates", status: "Status",
    name_servers: "Name servers", dnssec: "DNSSEC", registrant: "Registrant",
    contacts: "Contacts", source: "Source", warnings: "Warnings",
  };
  let current = "";

  function words(key) {
    return (LABELS[key] || key).replace(/_/g, " ");
  }

  function shown(value) {
    if (value === true) return "yes";
    if (value === false) return "no";
    if (Array.isArray(value)) return value.join("\n");
    return String(value);
  }

  function empty(value) {
    return value === null || value === undefined || value === "" ||
      (Array.isArray(value) && value.length === 0);
  }

  // Nested objects become rows labelled "Registrar · name"; empty values are left out.
  function rows(record, prefix) {
    const out = [];
    for (const [key, value] of Object.entries(record)) {
      if (key === "raw") continue;
      const label = prefix ? `${prefix} · ${words(key)}` : words(key);
      if (value && typeof value === "object" && !Array.isArray(value)) {
        out.push(...rows(value, label));
      } else if (!empty(value)) {
        out.push([label, shown(value)]);
      }
    }
    return out;
  }

  function explain(response, domain, message) {
    if (response.status === 400) return `“${domain}” cannot be looked up: ${message}.`;
    if (response.status === 403) {
      const tld = domain.split(".").pop();
      return `Whois of .${tld} domains is not available here: this top-level domain is restricted.`;
    }
    if (response.status === 429) {
      const wait = retryAfter(response);
      return `Too many lookups from your address. Wait ${wait} second${wait === 1 ? "" : "s"}, then try again.`;
    }
    if (response.status >= 500) {
      return `The whois servers for “${domain}” gave no usable answer: ${message}.`;
    }
    return message;
  }

  function reset() {
    body.replaceChildren();
    table.hidden = true;
    rawButton.hidden = true;
    raw.hidden = true;
    raw.textContent = "";
  }

  async function lookup(domain) {
    current = domain;
    reset();
    history.replaceState(null, "", `/ui/whois?domain=${encodeURIComponent(domain)}`);
    status.className = "status";
    status.textContent = "Looking up…";
    try {
      const response = await fetch(`/api/whois/json?domain=${encodeURIComponent(domain)}`, {
        headers: { Accept: "application/json" },
      });
      if (domain !== current) return;
      if (!response.ok) {
        status.className = "status error";
        status.textContent = explain(response, domain, await errorText(response));
        return;
      }
      const record = await response.json();
      for (const [label, value] of rows(record, "")) {
        const row = element("tr");
        row.append(element("th", label), element("td", value));
        body.appendChild(row);
      }
      table.hidden = false;
      rawButton.hidden = false;
      status.textContent = record.registered === false
        ? `${record.domain} is not registered.`
        : `Record of ${record.domain}.`;
    } catch (error) {
      status.className = "status error";
      status.textContent = "The service could not be reached.";
    }
  }

  async function showRaw() {
    const domain = current;
    status.className = "status";
    status.textContent = "Fetching the raw text…";
    const response = await fetch(`/api/whois?domain=${encodeURIComponent(domain)}`);
    if (!response.ok) {
      status.className = "status error";
      status.textContent = explain(response, domain, await errorText(response));
      return;
    }
    raw.textContent = await response.text();
    raw.hidden = false;
    status.textContent = `Raw text of ${domain}.`;
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const domain = input.value.trim();
    if (domain) lookup(domain);
  });
  rawButton.addEventListener("click", showRaw);
  const initial = new URLSearchParams(window.location.search).get("domain");
  if (initial) {
    input.value = initial;
    lookup(initial);
  }
})();
