// The script and style embedded in every SVG flame graph (svg_export.cc),
// kept apart from the C++ that writes the frames. The script reads what
// the writer put in the document: the frames' group (id "frames") carries
// the image width, margin, frame height, character width, total weight and
// its unit as data- attributes; each frame is a <g class="f" data-w=WEIGHT>
// holding a <title> (the name on its first line, then the DSO, samples and
// share), a <rect> and a <text>, in pre-order (parents before children,
// siblings left to right), which is what lets the script find a frame's
// ancestors and descendants without storing them.
//
// It gives: hover -> the details line; click -> zoom into the frame (its
// ancestors drawn full width and faded), "Reset zoom" or Escape -> back;
// "Search" or Ctrl-F -> a regular expression whose matches turn magenta,
// with their share of the total (a sample counted once even when matches
// nest). "?s=REGEX&z=INDEX" on the URL searches and zooms on load (links,
// and the headless-browser test); the root element gets data-ready="1"
// once the script has run.
#pragma once

#include <string_view>

namespace sample::report {

inline constexpr std::string_view kFlameSvgStyle = R"CSS(
text { font-family: Verdana, sans-serif; font-size: 12px; fill: #000; }
#title { font-size: 17px; }
#subtitle { fill: #444; }
.control { cursor: pointer; fill: #2255aa; }
.control:hover { text-decoration: underline; }
g.f { cursor: pointer; }
g.f text { pointer-events: none; }
g.f rect { rx: 2px; }
g.f:hover rect { stroke: #000; stroke-width: 0.5; }
g.parent { opacity: 0.55; }
)CSS";

inline constexpr std::string_view kFlameSvgScript = R"JS(
"use strict";
var HIGHLIGHT = "#e600e6";
var cfg = {}, frames = [], group, details, matched, resetButton, searchButton;
var searching = false;

function num(el, name) { return parseFloat(el.getAttribute(name)); }

function init() {
  group = document.getElementById("frames");
  details = document.getElementById("details");
  matched = document.getElementById("matched");
  resetButton = document.getElementById("reset");
  searchButton = document.getElementById("search");
  cfg.width = num(group, "data-width");
  cfg.margin = num(group, "data-margin");
  cfg.frameHeight = num(group, "data-frame-height");
  cfg.charWidth = num(group, "data-char-width");
  cfg.baseline = num(group, "data-baseline");
  cfg.total = num(group, "data-total");
  cfg.unit = group.getAttribute("data-unit");
  var groups = group.getElementsByTagName("g");
  for (var i = 0; i < groups.length; ++i) {
    var g = groups[i];
    var rect = g.getElementsByTagName("rect")[0];
    var lines = g.getElementsByTagName("title")[0].textContent.split("\n");
    g.frameIndex = i;
    frames.push({g: g, rect: rect, text: g.getElementsByTagName("text")[0] || null, index: i,
                 name: lines[0], info: lines.join("  |  "), fill: rect.getAttribute("fill"),
                 x: num(rect, "x"), w: num(rect, "width"), y: num(rect, "y"),
                 weight: parseFloat(g.getAttribute("data-w"))});
  }
  // Depth from y (the root is first); in pre-order a frame's parent is the
  // last frame seen one level closer to the root, and its descendants are
  // the frames after it up to `end`.
  var lastAt = [];
  frames.forEach(function (f, i) {
    f.depth = Math.round(Math.abs(f.y - frames[0].y) / cfg.frameHeight);
    f.parent = f.depth > 0 ? lastAt[f.depth - 1] : -1;
    lastAt[f.depth] = i;
    f.end = i + 1;
  });
  for (var j = frames.length - 1; j >= 0; --j) {
    var p = frames[j].parent;
    if (p >= 0 && frames[p].end < frames[j].end) frames[p].end = frames[j].end;
  }
  group.addEventListener("click", function (e) {
    var f = frameOf(e.target);
    if (f) zoom(f);
  });
  group.addEventListener("mouseover", function (e) {
    var f = frameOf(e.target);
    details.textContent = f ? f.info : "";
  });
  group.addEventListener("mouseout", function () { details.textContent = ""; });
  resetButton.addEventListener("click", resetZoom);
  searchButton.addEventListener("click", askSearch);
  window.addEventListener("keydown", function (e) {
    if ((e.ctrlKey || e.metaKey) && e.key === "f") {
      e.preventDefault();
      askSearch();
    } else if (e.key === "Escape") {
      resetZoom();
      search("");
    }
  });
  var params = new URLSearchParams(document.location.search);
  if (params.get("s")) search(params.get("s"));
  var z = frames[parseInt(params.get("z"), 10)];
  if (z) zoom(z);
  document.documentElement.setAttribute("data-ready", "1");
}

function frameOf(node) {
  for (; node && node !== group; node = node.parentNode) {
    if (node.frameIndex !== undefined) return frames[node.frameIndex];
  }
  return null;
}

// The label that fits `width` px: whole, cut with "..", or nothing (the
// same rule as the writer's).
function fit(f, x, width) {
  var chars = Math.floor((width - 6) / cfg.charWidth);
  var label = "";
  if (f.name.length <= chars) label = f.name;
  else if (chars >= 3) label = f.name.substring(0, chars - 2) + "..";
  if (!f.text) {
    if (!label) return;
    f.text = document.createElementNS("http://www.w3.org/2000/svg", "text");
    f.text.setAttribute("y", (f.y + cfg.baseline).toFixed(2));
    f.g.appendChild(f.text);
  }
  f.text.textContent = label;
  f.text.setAttribute("x", (x + 3).toFixed(2));
}

function place(f, x, width) {
  f.g.style.display = "";
  f.rect.setAttribute("x", x.toFixed(2));
  f.rect.setAttribute("width", width.toFixed(2));
  fit(f, x, width);
}

function zoom(target) {
  var left = cfg.margin, full = cfg.width - 2 * cfg.margin, scale = full / target.w;
  frames.forEach(function (f) {
    f.g.style.display = "none";
    f.g.classList.remove("parent");
  });
  for (var p = target.parent; p >= 0; p = frames[p].parent) {
    place(frames[p], left, full);
    frames[p].g.classList.add("parent");
  }
  for (var i = target.index; i < target.end; ++i) {
    var f = frames[i];
    place(f, left + (f.x - target.x) * scale, f.w * scale);
  }
  resetButton.style.display = "";
}

function resetZoom() {
  frames.forEach(function (f) {
    f.g.classList.remove("parent");
    place(f, f.x, f.w);
  });
  resetButton.style.display = "none";
}

function askSearch() {
  if (searching) {
    search("");
    return;
  }
  var term = window.prompt("Search frames (a regular expression):", "");
  if (term) search(term);
}

// Highlights the frames whose name matches `term` ("" clears) and shows
// their share; a match inside a matched frame is not counted again.
function search(term) {
  var re = null;
  if (term) {
    try {
      re = new RegExp(term);
    } catch (e) {
      matched.textContent = "Bad pattern: " + e.message;
      return;
    }
  }
  var weight = 0, until = 0;
  frames.forEach(function (f, i) {
    var hit = re !== null && re.test(f.name);
    f.rect.setAttribute("fill", hit ? HIGHLIGHT : f.fill);
    if (hit && i >= until) {
      weight += f.weight;
      until = f.end;
    }
  });
  searching = re !== null;
  searchButton.textContent = searching ? "Clear search" : "Search";
  if (!searching) {
    matched.textContent = "";
    return;
  }
  var share = cfg.total > 0 ? 100 * weight / cfg.total : 0;
  matched.textContent = "Matched: " + share.toFixed(2) + "% (" + weight + " of " + cfg.total +
                        " " + cfg.unit + ")";
}

window.addEventListener("load", init);
)JS";

}  // namespace sample::report
