// Shape Factory's replay drawing: every factory's specialty, money, inventory, orders and production, and the open offers.
// Injected into teamenvs/replay_viewer.html (it uses that page's helpers: el, clear, setupCanvas, colourOf, availableWidth...).
var SF_COLOURS = {circle: "#2563eb", square: "#16a34a", triangle: "#f59e0b", rectangle: "#9333ea", diamond: "#dc2626",
  hexagon: "#0891b2", star: "#ca8a04", oval: "#db2777"};
function sfGlyph(ctx, shape, x, y, r, filled) {
  ctx.beginPath();
  if (shape === "circle" || shape === "oval") ctx.ellipse(x, y, shape === "oval" ? r * 1.25 : r, r * (shape === "oval" ? .8 : 1), 0, 0, Math.PI * 2);
  else if (shape === "square") ctx.rect(x - r, y - r, 2 * r, 2 * r);
  else if (shape === "rectangle") ctx.rect(x - r * 1.3, y - r * .75, 2.6 * r, 1.5 * r);
  else if (shape === "triangle") { ctx.moveTo(x, y - r); ctx.lineTo(x + r, y + r * .8); ctx.lineTo(x - r, y + r * .8); ctx.closePath(); }
  else if (shape === "diamond") { ctx.moveTo(x, y - r); ctx.lineTo(x + r, y); ctx.lineTo(x, y + r); ctx.lineTo(x - r, y); ctx.closePath(); }
  else {
    var n = shape === "star" ? 10 : 6;
    for (var k = 0; k < n; k++) {
      var a = -Math.PI / 2 + k * 2 * Math.PI / n, rr = shape === "star" && k % 2 ? r * .45 : r;
      if (k) ctx.lineTo(x + rr * Math.cos(a), y + rr * Math.sin(a)); else ctx.moveTo(x + rr * Math.cos(a), y + rr * Math.sin(a));
    }
    ctx.closePath();
  }
  var c = SF_COLOURS[shape] || "#6b7280";
  if (filled) { ctx.fillStyle = c; ctx.fill(); }
  ctx.strokeStyle = c; ctx.lineWidth = 1.5; ctx.stroke();
}
function sfGoods(g) { return g[0] === "$" ? "$" + g[1] : g[1] + " " + g[0] + (g[1] === 1 ? "" : "s"); }
function drawShapeFactory(f) {
  var agents = f.agents || {}, names = Object.keys(agents), shapes = f.shapes || [], offers = f.offers || [];
  var W = availableWidth(), rowH = 30, top = 22, cols = {name: 6, spec: 84, money: 114, inv: 212, making: 212 + shapes.length * 44 + 4}; cols.orders = cols.making + 54;
  var offersTop = top + names.length * rowH + 14, H = offersTop + 18 + Math.max(1, offers.length) * 16 + 6;
  var ctx = setupCanvas(W, H);
  ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, W, H);
  ctx.font = "600 11px system-ui, sans-serif"; ctx.textBaseline = "middle"; ctx.fillStyle = "#374151";
  ctx.fillText("factory", cols.name, 10); ctx.fillText("spec.", cols.spec - 12, 10); ctx.fillText("money", cols.money, 10);
  ctx.fillText("inventory", cols.inv, 10); ctx.fillText("making", cols.making, 10); ctx.fillText("orders (filled: done)", cols.orders, 10);
  var most = 1;
  names.forEach(function (a) { most = Math.max(most, agents[a].money); });
  names.forEach(function (a, r) {
    var info = agents[a], y = top + r * rowH + rowH / 2;
    if (r % 2) { ctx.fillStyle = "#f8fafc"; ctx.fillRect(0, y - rowH / 2, W, rowH); }
    ctx.fillStyle = colourOf(a); ctx.fillRect(cols.name, y - 6, 4, 12);
    ctx.fillStyle = "#111827"; ctx.font = "12px system-ui, sans-serif"; ctx.fillText(a, cols.name + 8, y);
    sfGlyph(ctx, info.specialty, cols.spec, y, 7, true);
    var bw = 84 * info.money / most;
    ctx.fillStyle = "#d1fae5"; ctx.fillRect(cols.money, y - 8, bw, 16);
    var locked = (info.committed || {})["$"] || 0;
    if (locked) { ctx.fillStyle = "#fde68a"; ctx.fillRect(cols.money + bw - 84 * locked / most, y - 8, 84 * locked / most, 16); }
    ctx.fillStyle = "#065f46"; ctx.fillText("$" + info.money, cols.money + 2, y);
    shapes.forEach(function (s, k) {
      var x = cols.inv + k * 44 + 8, n = (info.inventory || {})[s] || 0, held = ((info.committed || {})[s]) || 0;
      sfGlyph(ctx, s, x, y, 6, n > 0);
      ctx.fillStyle = n ? "#111827" : "#9ca3af"; ctx.fillText("\u00d7" + n + (held ? "*" : ""), x + 10, y);
    });
    var x = cols.orders;
    (info.orders || []).forEach(function (o) {
      Object.keys(o.shapes).forEach(function (s) {
        for (var k = 0; k < o.shapes[s]; k++) { sfGlyph(ctx, s, x + 7, y, 6, o.fulfilled_at !== null); x += 17; }
      });
      x += 6;
    });
    if (info.producing) {
      sfGlyph(ctx, info.producing.shape, cols.making + 8, y, 6, false);
      ctx.fillStyle = "#6b7280"; ctx.fillText(info.producing.steps_left + " left", cols.making + 18, y);
    }
  });
  ctx.fillStyle = "#374151"; ctx.font = "600 11px system-ui, sans-serif";
  ctx.fillText("Open offers (step " + f.step + "/" + f.max_steps + ")", cols.name, offersTop);
  ctx.font = "12px system-ui, sans-serif";
  if (!offers.length) { ctx.fillStyle = "#9ca3af"; ctx.fillText("none", cols.name, offersTop + 18); }
  offers.forEach(function (o, k) {
    var y = offersTop + 18 + k * 16;
    ctx.fillStyle = colourOf(o.from); ctx.fillText("#" + o.offer + " " + o.from, cols.name, y);
    ctx.fillStyle = "#111827"; ctx.fillText("\u2192 " + o.to + ": gives " + sfGoods(o.give) + " for " + sfGoods(o.get), cols.name + 96, y);
  });
}
function sfLegend() {
  var box = clear($("legend"));
  Object.keys(SF_COLOURS).forEach(function (s) {
    box.appendChild(el("span", null, el("span", {cls: "sw", style: "background:" + SF_COLOURS[s]}), s));
  });
  box.appendChild(el("span", null, el("span", {cls: "sw", style: "background:#fde68a"}), "money committed to offers (* shapes committed)"));
}
function sfStatus(f) {
  var t = el("table", {cls: "kv"}), agents = f.agents || {}, names = Object.keys(agents), total = 0, done = 0, orders = 0;
  names.forEach(function (a) {
    total += agents[a].money;
    (agents[a].orders || []).forEach(function (o) { orders += 1; if (o.fulfilled_at !== null) done += 1; });
  });
  t.appendChild(el("tr", null, el("th", {text: "market"}), el("td", {text: "step " + f.step + "/" + f.max_steps + " \u00b7 mean money $" +
    fmtNum(names.length ? total / names.length : 0) + " \u00b7 orders fulfilled " + done + "/" + orders + " \u00b7 open offers " + (f.offers || []).length})));
  clear($("world-status")).appendChild(t);
}
DRAWERS.shape_factory = {title: "Market (true state)", legend: sfLegend,
  draw: function (f, i) { drawShapeFactory(f); sfStatus(f); }};
