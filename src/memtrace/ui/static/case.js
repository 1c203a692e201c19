// The case page: the evidence subgraph (Cytoscape.js + dagre, left to right by seq) with the
// attribution's path and blamed operation highlighted, and the annotation form.
(function () {
  var box = document.getElementById("graph");
  var info = document.getElementById("graph-info");
  var run = box.dataset.run;
  var started = performance.now();

  var style = [
    { selector: "node", style: { "label": "data(label)", "font-size": 10, "text-valign": "bottom", "text-margin-y": 4,
      "color": "#334155", "text-max-width": 120, "text-wrap": "ellipsis", "min-zoomed-font-size": 6 } },
    { selector: "node.op", style: { "shape": "round-rectangle", "width": 26, "height": 18, "background-color": "#e0e7ff",
      "border-width": 1, "border-color": "#6366f1" } },
    { selector: "node.cat-extraction", style: { "background-color": "#ede9fe", "border-color": "#7c3aed" } },
    { selector: "node.cat-update", style: { "background-color": "#cffafe", "border-color": "#0e7490" } },
    { selector: "node.cat-deletion", style: { "background-color": "#ffe4e6", "border-color": "#be123c" } },
    { selector: "node.cat-retrieval", style: { "background-color": "#ffedd5", "border-color": "#c2410c" } },
    { selector: "node.cat-response", style: { "background-color": "#dbeafe", "border-color": "#1d4ed8" } },
    { selector: "node.var", style: { "shape": "ellipse", "width": 12, "height": 12, "background-color": "#fff",
      "border-width": 1, "border-color": "#9ca3af", "font-size": 9, "color": "#64748b",
      "text-valign": "top", "text-margin-y": -3 } },
    { selector: "node.vcat-memory_entry", style: { "background-color": "#ecfeff", "border-color": "#0e7490", "width": 14, "height": 14 } },
    { selector: "node.vcat-message", style: { "background-color": "#fffbeb", "border-color": "#d97706" } },
    { selector: "edge", style: { "width": 1, "line-color": "#cbd5e1", "target-arrow-color": "#cbd5e1",
      "target-arrow-shape": "triangle", "arrow-scale": 0.6, "curve-style": "bezier" } },
    { selector: "node.path", style: { "border-width": 3, "border-color": "#f59e0b", "background-color": "#fef3c7" } },
    { selector: "edge.path", style: { "width": 3, "line-color": "#f59e0b", "target-arrow-color": "#f59e0b", "z-index": 9 } },
    { selector: "node.blamed", style: { "border-width": 4, "border-color": "#dc2626", "background-color": "#fee2e2",
      "width": 34, "height": 24, "font-weight": "bold", "color": "#b91c1c", "font-size": 11 } },
    { selector: "node:selected", style: { "overlay-opacity": 0.12 } }
  ];

  fetch(box.dataset.url).then(function (r) { return r.json(); }).then(function (data) {
    var elements = data.nodes.concat(data.edges);
    var cy = cytoscape({ container: box, elements: elements, style: style, wheelSensitivity: 0.3, maxZoom: 2.5,
      layout: { name: "dagre", rankDir: "LR", nodeSep: 26, rankSep: 56, edgeSep: 6, animate: false,
        sort: function (a, b) { return a.data("seq") - b.data("seq"); } } });
    window.caseGraph = cy;
    if (cy.zoom() > 1.4) { cy.zoom(1.4); cy.center(); }  // a small graph stays readable, not huge
    highlightPath(cy);
    cy.on("tap", "node.op", function (e) {
      location.href = "/runs/" + encodeURIComponent(run) + "/ops/" + encodeURIComponent(e.target.id());
    });
    cy.on("mouseover", "node", function (e) {
      var d = e.target.data();
      info.textContent = d.id + " · " + d.category + " · seq " + d.seq + (d.text ? " — " + d.text : "");
    });
    document.getElementById("fit").addEventListener("click", function () { cy.fit(undefined, 20); });
    box.dataset.nodes = String(data.nodes.length);
    box.dataset.renderMs = String(Math.round(performance.now() - started));
    box.classList.add("ready");
    if (data.truncated) info.textContent = "Showing the " + data.limit + " most relevant nodes.";
  }).catch(function (err) { info.textContent = "Could not load the graph: " + err; });

  // Edges of the evidence path: the shortest directed route between consecutive path nodes.
  function highlightPath(cy) {
    var stops = cy.nodes(".path, .blamed").sort(function (a, b) { return a.data("seq") - b.data("seq"); });
    for (var i = 0; i + 1 < stops.length; i++) {
      var found = cy.elements().aStar({ root: stops[i], goal: stops[i + 1], directed: true });
      if (found.found) found.path.addClass("path");
    }
  }

  var form = document.getElementById("annotation-form");
  var status = document.getElementById("annotation-status");
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var body = {};
    new FormData(form).forEach(function (value, key) { body[key] = value; });
    status.textContent = "saving…";
    fetch(form.dataset.url, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) })
      .then(function (r) { return r.json().then(function (j) { return { ok: r.ok, json: j }; }); })
      .then(function (res) {
        if (!res.ok) { status.textContent = res.json.error || "could not save"; return; }
        var l = res.json, li = document.createElement("li");
        li.innerHTML = '<span class="pill et et-' + l.error_type + '"></span> <span class="mono"></span> <span class="muted"></span>';
        li.children[0].textContent = l.error_type;
        li.children[1].textContent = l.op_id || "";
        li.children[2].textContent = l.author || "anonymous";
        if (l.note) { var note = document.createElement("div"); note.textContent = l.note; li.appendChild(note); }
        document.getElementById("annotations").appendChild(li);
        status.textContent = "saved";
        form.note.value = "";
      }).catch(function (err) { status.textContent = "could not save: " + err; });
  });
})();
