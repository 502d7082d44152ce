// Map task's replay drawing: both maps, the route and the follower's drawing on the viewer's canvas.
// Injected into teamenvs/replay_viewer.html (it uses that page's helpers: el, clear, setupCanvas, fmtNum...).
function drawMapTask(f) {
  var m = f.maps || {}, W = m.width, Hh = m.height, gap = 26, top = 20;
  var cs = Math.max(6, Math.floor(Math.min((availableWidth() - gap) / (2 * W), 420 / Hh)));
  var mw = W * cs, ctx = setupCanvas(2 * mw + gap, Hh * cs + top);
  ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, 2 * mw + gap, Hh * cs + top);
  var changed = {guide: {}, follower: {}};
  (m.discrepancies || []).forEach(function (d) {
    if (d.guide) changed.guide[d.guide.name] = d.kind;
    if (d.follower) changed.follower[d.follower.name] = d.kind;
  });
  [["guide", 0, "Guide's map: route and finish"], ["follower", mw + gap, "Follower's map: its drawing"]].forEach(function (spec) {
    var who = spec[0], ox = spec[1], oy = top;
    ctx.fillStyle = "#374151"; ctx.font = "600 12px system-ui, sans-serif"; ctx.textBaseline = "top";
    ctx.fillText(spec[2], ox, 2);
    ctx.fillStyle = "#fbf8ef"; ctx.fillRect(ox, oy, mw, Hh * cs);
    ctx.strokeStyle = "#ece5d3"; ctx.lineWidth = 1;
    ctx.beginPath();
    for (var x = 0; x <= W; x++) { ctx.moveTo(ox + x * cs + .5, oy); ctx.lineTo(ox + x * cs + .5, oy + Hh * cs); }
    for (var y = 0; y <= Hh; y++) { ctx.moveTo(ox, oy + y * cs + .5); ctx.lineTo(ox + mw, oy + y * cs + .5); }
    ctx.stroke();
    (m[who] || []).forEach(function (lm) {
      var x0 = ox + lm.x0 * cs, y0 = oy + lm.y0 * cs, w = (lm.x1 - lm.x0 + 1) * cs, h = (lm.y1 - lm.y0 + 1) * cs;
      ctx.fillStyle = lm.blocked ? "#94a3b8" : "#bbe5b0"; ctx.fillRect(x0, y0, w, h);
      if (lm.blocked) {
        ctx.save(); ctx.beginPath(); ctx.rect(x0, y0, w, h); ctx.clip();
        ctx.strokeStyle = "#64748b"; ctx.lineWidth = 1;
        for (var k = -h; k < w; k += 5) { ctx.beginPath(); ctx.moveTo(x0 + k, y0 + h); ctx.lineTo(x0 + k + h, y0); ctx.stroke(); }
        ctx.restore();
      }
      if (changed[who][lm.name]) {
        ctx.setLineDash([4, 3]); ctx.strokeStyle = "#dc2626"; ctx.lineWidth = 2;
        ctx.strokeRect(x0 - 1, y0 - 1, w + 2, h + 2); ctx.setLineDash([]);
      }
      ctx.font = Math.max(8, Math.min(11, cs * .7)) + "px system-ui, sans-serif";
      var label = lm.name, tw = ctx.measureText(label).width;
      var lx = Math.max(ox, Math.min(ox + mw - tw - 2, x0 + w / 2 - tw / 2)), ly = y0 + h + 1 > oy + Hh * cs - 12 ? y0 - 12 : y0 + h + 1;
      ctx.fillStyle = "rgba(255,255,255,.75)"; ctx.fillRect(lx - 1, ly, tw + 2, 11);
      ctx.fillStyle = lm.blocked ? "#334155" : "#166534"; ctx.textBaseline = "top"; ctx.fillText(label, lx, ly);
    });
    function centre(c) { return [ox + (c[0] + .5) * cs, oy + (c[1] + .5) * cs]; }
    if (who === "guide" && m.route && m.route.length) {
      ctx.strokeStyle = "#f59e0b"; ctx.globalAlpha = .85; ctx.lineWidth = Math.max(3, cs * .45); ctx.lineJoin = "round"; ctx.lineCap = "round";
      ctx.beginPath();
      m.route.forEach(function (c, k) { var p = centre(c); if (k) ctx.lineTo(p[0], p[1]); else ctx.moveTo(p[0], p[1]); });
      ctx.stroke(); ctx.globalAlpha = 1;
    }
    ctx.strokeStyle = "#1d4ed8"; ctx.lineWidth = Math.max(2, cs * .22); ctx.lineCap = "round";
    (f.drawing || []).forEach(function (e) {
      var a = centre(e[0]), b = centre(e[1]);
      ctx.beginPath(); ctx.moveTo(a[0], a[1]); ctx.lineTo(b[0], b[1]); ctx.stroke();
    });
    function mark(c, colour, letter) {
      var p = centre(c);
      ctx.fillStyle = colour; ctx.beginPath(); ctx.arc(p[0], p[1], Math.max(5, cs * .48), 0, Math.PI * 2); ctx.fill();
      ctx.fillStyle = "#fff"; ctx.font = "bold " + Math.max(8, Math.floor(cs * .6)) + "px system-ui, sans-serif";
      ctx.textAlign = "center"; ctx.textBaseline = "middle"; ctx.fillText(letter, p[0], p[1] + .5); ctx.textAlign = "left";
    }
    if (m.start) mark(m.start, "#16a34a", "S");
    if (who === "guide" && m.finish) mark(m.finish, "#b91c1c", "F");
  });
}
function mtLegend() {
  var items = [["#f59e0b", "target route (guide only)"], ["#1d4ed8", "follower's drawing"], ["#bbe5b0", "landmark"], ["#94a3b8", "blocked landmark"],
    ["#16a34a", "start", 1], ["#b91c1c", "finish", 1]];
  var box = clear($("legend"));
  items.forEach(function (it) { box.appendChild(el("span", null, el("span", {cls: "sw" + (it[2] ? " round" : ""), style: "background:" + it[0]}), it[1])); });
  box.appendChild(el("span", null, el("span", {cls: "sw", style: "background:#fff;border:2px dashed #dc2626"}), "differs between the maps"));
}
function mtStatus(f) {
  var t = el("table", {cls: "kv"});
  t.appendChild(el("tr", null, el("th", {text: "drawing"}), el("td", {text: "step " + f.step + "/" + f.max_steps + " \u00b7 route accuracy " +
    fmtNum(f.route_accuracy) + " \u00b7 " + (f.drawing || []).length + " segments \u00b7 completed " + (f.completed ? "yes" : "no") + (f.done ? " \u00b7 the follower said done" : "")})));
  var diffs = ((f.maps || {}).discrepancies || []).map(function (d) {
    return d.kind + ": " + (d.guide ? d.guide.name : "\u2013") + " / " + (d.follower ? d.follower.name : "\u2013");
  });
  t.appendChild(el("tr", null, el("th", {text: "discrepancies"}), el("td", {text: diffs.length ? diffs.join("; ") + "  (guide / follower)" : "none"})));
  clear($("world-status")).appendChild(t);
}
DRAWERS.map_task = {title: "Maps (true state)", legend: mtLegend,
  draw: function (f, i) { drawMapTask(f); mtStatus(f); }};
