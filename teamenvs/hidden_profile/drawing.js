// Hidden Profile's replay drawing: each member's document (shared facts grey, unique ones coloured and
// ticked once surfaced in the chat) and its votes. Injected into teamenvs/replay_viewer.html (it uses
// that page's helpers: el, clear, setupCanvas, availableWidth, colourOf...).
var HP = {shared: "#e5e7eb", key: "#bbf7d0", keyEdge: "#16a34a", other: "#fed7aa", otherEdge: "#ea580c"};
function hpFit(ctx, text, width) {
  if (ctx.measureText(text).width <= width) return text;
  var s = text;
  while (s.length > 1 && ctx.measureText(s + "\u2026").width > width) s = s.slice(0, -1);
  return s + "\u2026";
}
function drawHiddenProfile(f) {
  var names = Object.keys(f.members || {}), n = Math.max(1, names.length), gap = 10;
  var W = availableWidth(), colW = Math.floor((W - gap * (n - 1)) / n), rowH = 15, top = 44;
  var rows = 0;
  names.forEach(function (a) { rows = Math.max(rows, f.members[a].facts.length + (f.candidates || []).length); });
  var H = top + rows * rowH + 8, ctx = setupCanvas(W, H);
  ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, W, H);
  names.forEach(function (a, k) {
    var m = f.members[a], x = k * (colW + gap), y = top;
    ctx.fillStyle = colourOf(a); ctx.fillRect(x, 0, colW, 3);
    ctx.fillStyle = "#111827"; ctx.font = "600 12px system-ui, sans-serif"; ctx.textBaseline = "top";
    ctx.fillText(a, x, 7);
    ctx.font = "11px system-ui, sans-serif"; ctx.fillStyle = "#374151";
    var votes = "vote " + (m.initial || "\u2013") + " \u2192 " + (m.final || "\u2013");
    ctx.fillText(votes, x, 23);
    if (m.final) {
      ctx.fillStyle = m.final === f.best ? "#16a34a" : "#dc2626";
      ctx.fillText(m.final === f.best ? " \u2713 best" : " \u2717", x + ctx.measureText(votes).width, 23);
    }
    (f.candidates || []).forEach(function (c) {
      ctx.fillStyle = c === f.best ? "#166534" : "#374151"; ctx.font = "600 11px system-ui, sans-serif";
      ctx.fillText("Candidate " + c + (c === f.best ? " (best)" : ""), x, y + 2); y += rowH;
      m.facts.filter(function (t) { return t.candidate === c; }).forEach(function (t) {
        var key = t.unique && t.valence > 0, fill = !t.unique ? HP.shared : key ? HP.key : HP.other;
        ctx.fillStyle = fill; ctx.fillRect(x, y + 1, colW, rowH - 2);
        if (t.unique && t.surfaced) {
          ctx.strokeStyle = key ? HP.keyEdge : HP.otherEdge; ctx.lineWidth = 2; ctx.strokeRect(x + 1, y + 2, colW - 2, rowH - 4);
        }
        ctx.fillStyle = "#111827"; ctx.font = "10px system-ui, sans-serif";
        var mark = (t.valence > 0 ? "+ " : "\u2212 ") + (t.unique && t.surfaced ? "\u2713 " : "");
        ctx.fillText(hpFit(ctx, mark + t.text, colW - 6), x + 3, y + 3);
        y += rowH;
      });
    });
  });
}
function hpLegend() {
  var box = clear($("legend"));
  [[HP.shared, "shared fact (every member has it)"], [HP.key, "unique strength of the best candidate"],
   [HP.other, "unique weakness of another candidate"]].forEach(function (it) {
    box.appendChild(el("span", null, el("span", {cls: "sw", style: "background:" + it[0]}), it[1]));
  });
  box.appendChild(el("span", null, el("span", {cls: "sw", style: "background:#fff;border:2px solid " + HP.keyEdge}), "\u2713 surfaced in the chat"));
}
function hpStatus(f) {
  var t = el("table", {cls: "kv"});
  var support = Object.keys(f.support_full || {}).map(function (c) { return c + " " + f.support_full[c]; }).join(", ");
  var facts = 0, surfaced = 0;
  Object.keys(f.members || {}).forEach(function (a) {
    f.members[a].facts.forEach(function (x) { if (x.unique) { facts += 1; if (x.surfaced) surfaced += 1; } });
  });
  t.appendChild(el("tr", null, el("th", {text: "task"}), el("td", {text: (f.title || "") + " \u00b7 step " + f.step + "/" + f.max_steps +
    " \u00b7 " + String(f.phase).replace("_", " ")})));
  t.appendChild(el("tr", null, el("th", {text: "support"}), el("td", {text: "on all the information: " + support + " (best " + f.best + ")"})));
  t.appendChild(el("tr", null, el("th", {text: "pooling"}), el("td", {text: surfaced + " of " + facts + " unique facts surfaced in the chat"})));
  clear($("world-status")).appendChild(t);
}
DRAWERS.hidden_profile = {title: "Documents and votes (true state)", legend: hpLegend,
  draw: function (f, i) { drawHiddenProfile(f); hpStatus(f); }};
