#!/usr/bin/env python3
"""Prints what a flame graph SVG of sample-report holds, one fact a line,
tab-separated, for tests/golden/svg_export_test.cc. Parsing the file with a
real XML parser here is half the test: a badly escaped name fails it.

  title   DOCUMENT-TITLE
  text    ID  TEXT                      (every <text> with an id)
  total   WEIGHT  UNIT
  frame   X  Y  WIDTH  WEIGHT  LABEL  TITLE   (in document order)

Line breaks in texts become " | ", tabs spaces.
"""
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def one_line(text):
    return (text or "").replace("\t", " ").replace("\n", " | ")


def main(path):
    root = ET.parse(path).getroot()
    if root.tag != NS + "svg":
        sys.exit(f"{path}: the root element is {root.tag}, not svg")
    print("title\t" + one_line(root.find(NS + "title").text))
    for text in root.iter(NS + "text"):
        if text.get("id"):
            print(f"text\t{text.get('id')}\t{one_line(text.text)}")
    frames = root.find(f"{NS}g[@id='frames']")
    print(f"total\t{frames.get('data-total')}\t{frames.get('data-unit')}")
    for g in frames.findall(NS + "g"):
        rect = g.find(NS + "rect")
        label = g.find(NS + "text")  # none when the frame is too narrow
        fields = [rect.get("x"), rect.get("y"), rect.get("width"), g.get("data-w"),
                  one_line(label.text if label is not None else ""), one_line(g.find(NS + "title").text)]
        print("frame\t" + "\t".join(fields))


if __name__ == "__main__":
    main(sys.argv[1])
