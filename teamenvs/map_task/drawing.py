"""Map task's replay drawing: terminal colours for its ansi maps, and the HTML viewer's canvas
code beside this module (`drawing.js`), both found through the paradigm's declaration."""

TERMINAL_COLOURS = {"*": "yellow", "o": "cyan", "@": "green", "S": "magenta", "F": "magenta"}


def is_map_row(line: str) -> bool:
    """Whether a line of the ansi frame is a map row (a row number, then map characters without spaces)."""
    return line[:3].strip().isdigit() and " " not in line[3:]
