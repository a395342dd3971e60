// API page: /openapi.json as a readable page (operations, parameters, answers), text only.
"use strict";

(function () {
  const { element, inline } = window.ui;
  const status = document.getElementById("status");
  const toc = document.getElementById("toc");
  const list = document.getElementById("operations");
  const METHODS = ["get", "head", "post", "put", "patch", "delete", "options"];

  function schemaText(schema) {
    if (!schema) return "";
    if (schema.oneOf) return schema.oneOf.map(schemaText).join(" or ");
    const parts = [schema.type || ""];
    if (schema.enum) parts.push(`one of ${schema.enum.join(", ")}`);
    if (schema.minimum !== undefined || schema.maximum !== undefined) {
      parts.push(`${schema.minimum ?? "…"}..${schema.maximum ?? "…"}`);
    }
    if (schema.minLength !== undefined || schema.maxLength !== undefined) {
      parts.push(`length ${schema.minLength ?? 0}..${schema.maxLength ?? "…"}`);
    }
    if (schema.pattern) parts.push(`pattern ${schema.pattern}`);
    if (schema.default !== undefined) parts.push(`default ${schema.default}`);
    return parts.filter(Boolean).join(", ");
  }

  function table(headings, rows) {
    const node = element("table");
    const head = element("tr");
    for (const text of headings) head.appendChild(element("th", text));
    const thead = element("thead");
    thead.appendChild(head);
    const tbody = element("tbody");
    for (const cells of rows) {
      const row = element("tr");
      for (const text of cells) row.appendChild(element("td")).appendChild(inline(text));
      tbody.appendChild(row);
    }
    node.append(thead, tbody);
    const wrap = element("div", null, "table-wrap");
    wrap.appendChild(node);
    return wrap;
  }

  function operation(path, method, op) {
    const id = op.operationId || `${method}-${path}`;
    const section = element("section");
    section.id = id;
    section.className = "operation";
    section.appendChild(element("h2", `${method.toUpperCase()} ${path}`));
    if (op.summary) section.appendChild(element("p")).appendChild(inline(op.summary));
    section.appendChild(element("p", `operationId: ${id}`, "hint"));
    const params = op.parameters || [];
    if (params.length) {
      section.appendChild(element("h3", "Parameters"));
      section.appendChild(table(
        ["Name", "In", "Required", "Type", "Meaning"],
        params.map((p) => [p.name, p.in, p.required ? "yes" : "no", schemaText(p.schema), p.description || ""]),
      ));
    }
    if (op.requestBody) {
      section.appendChild(element("h3", "Request body"));
      section.appendChild(element("p", Object.keys(op.requestBody.content || {}).join(", ")));
    }
    const answers = Object.entries(op.responses || {});
    if (answers.length) {
      section.appendChild(element("h3", "Answers"));
      section.appendChild(table(
        ["Status", "Meaning", "Content"],
        answers.map(([code, r]) => [code, r.description || "", Object.keys(r.content || {}).join(", ")]),
      ));
    }
    const link = element("a", `${method.toUpperCase()} ${path}`);
    link.href = `#${id}`;
    return [section, link];
  }

  async function load() {
    try {
      const response = await fetch("/openapi.json", { headers: { Accept: "application/json" } });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const doc = await response.json();
      document.getElementById("title").textContent = `${doc.info.title} API ${doc.info.version}`;
      if (doc.info.description) status.textContent = doc.info.description;
      let count = 0;
      for (const [path, item] of Object.entries(doc.paths)) {
        for (const method of METHODS) {
          if (!item[method]) continue;
          const [section, link] = operation(path, method, item[method]);
          list.appendChild(section);
          toc.appendChild(link);
          count += 1;
        }
      }
      status.textContent = `${count} operations. ${doc.info.description || ""}`;
    } catch (error) {
      status.className = "status error";
      status.textContent = `The OpenAPI document could not be loaded (${error.message}).`;
    }
  }
  load();
})();
