// Search and rescue's replay drawing: the building's true state on the viewer's canvas.
// Injected into teamenvs/replay_viewer.html (it uses that page's helpers: el, clear, setupCanvas, colourOf...).
var VICTIM = {stable: "#16a34a", critical: "#dc2626", stabilized: "#f59e0b"};
function victimColour(v) { return v.kind === "stable" ? VICTIM.stable : (v.stabilized ? VICTIM.stabilized : VICTIM.critical); }
function drawSearchRescue(f, i) {
  var W = f.width, Hh = f.height, cs = Math.max(4, Math.floor(Math.min(availableWidth() / W, 620 / Hh)));
  var ctx = setupCanvas(W * cs, Hh * cs);
  ctx.fillStyle = "#374151"; ctx.fillRect(0, 0, W * cs, Hh * cs);
  (f.rooms || []).forEach(function (r) {
    ctx.fillStyle = r.name === f.hospital ? "#dbeafe" : "#f6f1e7";
    ctx.fillRect(r.x0 * cs, r.y0 * cs, (r.x1 - r.x0 + 1) * cs, (r.y1 - r.y0 + 1) * cs);
  });
  (f.doors || []).forEach(function (d) { ctx.fillStyle = "#e7dcc6"; ctx.fillRect(d.cell[0] * cs, d.cell[1] * cs, cs, cs); });
  if (cs >= 9) {
    ctx.font = Math.max(8, Math.min(11, cs * 0.6)) + "px system-ui, sans-serif";
    ctx.textBaseline = "top";
    (f.rooms || []).forEach(function (r) {
      var w = (r.x1 - r.x0 + 1) * cs;
      ctx.fillStyle = r.name === f.hospital ? "#1d4ed8" : "#a8a29e";
      ctx.save(); ctx.beginPath(); ctx.rect(r.x0 * cs, r.y0 * cs, w, (r.y1 - r.y0 + 1) * cs); ctx.clip();
      ctx.fillText(r.name, r.x0 * cs + 2, r.y0 * cs + 1);
      ctx.restore();
    });
  }
  (f.rubble || []).forEach(function (c) {
    var x = c[0] * cs, y = c[1] * cs;
    ctx.fillStyle = "#92400e"; ctx.fillRect(x, y, cs, cs);
    ctx.strokeStyle = "#fde68a"; ctx.lineWidth = Math.max(1, cs / 8);
    ctx.beginPath(); ctx.moveTo(x + cs * .2, y + cs * .2); ctx.lineTo(x + cs * .8, y + cs * .8);
    ctx.moveTo(x + cs * .8, y + cs * .2); ctx.lineTo(x + cs * .2, y + cs * .8); ctx.stroke();
  });
  (f.victims || []).forEach(function (v) {
    if (!v.cell || v.rescued) return;
    var x = (v.cell[0] + .5) * cs, y = (v.cell[1] + .5) * cs;
    ctx.fillStyle = victimColour(v);
    ctx.beginPath(); ctx.arc(x, y, cs * .36, 0, Math.PI * 2); ctx.fill();
    if (cs >= 14) {
      ctx.fillStyle = "#fff"; ctx.font = "bold " + Math.floor(cs * .42) + "px system-ui, sans-serif";
      ctx.textAlign = "center"; ctx.textBaseline = "middle"; ctx.fillText(String(v.id), x, y + .5); ctx.textAlign = "left";
    }
  });
  var agents = f.agents || {};
  var names = Object.keys(agents);
  names.forEach(function (a) {  // trails: the last steps of each agent
    ctx.strokeStyle = colourOf(a); ctx.globalAlpha = .35; ctx.lineWidth = Math.max(1.5, cs * .18); ctx.lineJoin = "round";
    ctx.beginPath();
    var started = false;
    for (var j = Math.max(0, i - 15); j <= i && j < FRAMES.length; j++) {
      var p = ((FRAMES[j].agents || {})[a] || {}).cell;
      if (!p) continue;
      var px = (p[0] + .5) * cs, py = (p[1] + .5) * cs;
      if (!started) { ctx.moveTo(px, py); started = true; } else ctx.lineTo(px, py);
    }
    ctx.stroke(); ctx.globalAlpha = 1;
  });
  var byCell = {};
  names.forEach(function (a) {
    var info = agents[a], c = info.cell; if (!c) return;
    var key = c[0] + "," + c[1], k = byCell[key] = (byCell[key] || 0) + 1;
    var off = (k - 1) * cs * .22, s = cs * .84;
    var x = c[0] * cs + (cs - s) / 2 + off, y = c[1] * cs + (cs - s) / 2 - off;
    ctx.fillStyle = colourOf(a); ctx.strokeStyle = "#fff"; ctx.lineWidth = Math.max(1, cs / 10);
    ctx.beginPath(); ctx.rect(x, y, s, s); ctx.fill(); ctx.stroke();
    ctx.fillStyle = "#fff"; ctx.font = "bold " + Math.max(7, Math.floor(s * .62)) + "px system-ui, sans-serif";
    ctx.textAlign = "center"; ctx.textBaseline = "middle";
    ctx.fillText((info.role || a).charAt(0).toUpperCase(), x + s / 2, y + s / 2 + .5); ctx.textAlign = "left";
    if (info.carrying) {
      var carried = (f.victims || [])[info.carrying - 1] || {kind: "stable"};
      ctx.fillStyle = victimColour(carried); ctx.strokeStyle = "#fff";
      ctx.beginPath(); ctx.arc(x + s, y, Math.max(2.5, cs * .22), 0, Math.PI * 2); ctx.fill(); ctx.stroke();
    }
  });
}
function srLegend() {
  var items = [["#374151", "wall"], ["#f6f1e7", "floor"], ["#dbeafe", "Hospital"], ["#92400e", "rubble"],
    [VICTIM.stable, "stable victim", 1], [VICTIM.critical, "critical victim", 1], [VICTIM.stabilized, "critical, stabilized", 1]];
  var box = clear($("legend"));
  items.forEach(function (it) { box.appendChild(el("span", null, el("span", {cls: "sw" + (it[2] ? " round" : ""), style: "background:" + it[0]}), it[1])); });
  AGENTS.forEach(function (a) { box.appendChild(el("span", null, el("span", {cls: "sw", style: "background:" + colourOf(a)}), a)); });
  box.appendChild(el("span", {text: "small dot on an agent: the victim it carries; faint lines: its last 15 steps"}));
}
function srStatus(f) {
  var s = f.score || {};
  var t = el("table", {cls: "kv"});
  t.appendChild(el("tr", null, el("th", {text: "team"}), el("td", {text: "step " + f.step + "/" + f.max_steps + " \u00b7 rescued " + s.rescued + "/" + s.victims +
    " (" + s.stable + " stable, " + s.critical + " critical) \u00b7 " + s.points + " points"})));
  var agents = f.agents || {};
  Object.keys(agents).forEach(function (a) {
    var info = agents[a];
    var text = "(" + (info.cell || []).join(",") + ") in " + info.room + (info.carrying ? " \u00b7 carrying victim " + info.carrying : "") + (info.busy ? " \u00b7 " + info.busy : "");
    t.appendChild(el("tr", null, el("th", null, el("span", {cls: "sw", style: "background:" + colourOf(a) + ";margin-right:5px"}), a), el("td", {text: text})));
  });
  clear($("world-status")).appendChild(t);
}
DRAWERS.search_rescue = {title: "Building (true state)", legend: srLegend,
  draw: function (f, i) { drawSearchRescue(f, i); srStatus(f); },
  role: function (agent) { return agent.split("_")[0]; }};
