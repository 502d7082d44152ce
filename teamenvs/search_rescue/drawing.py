"""Search and rescue's replay drawing: terminal colours for its ansi map, and the HTML viewer's
canvas code beside this module (`drawing.js`), both found through the paradigm's declaration."""

TERMINAL_COLOURS = {"#": "dim", "+": "dim", "X": "yellow", "h": "blue", "s": "green", "C": "red", "c": "magenta",
                    "M": "cyan", "E": "cyan", "T": "cyan"}
_MAP_CHARACTERS = set("#.+XhsCcMET")


def is_map_row(line: str) -> bool:
    """Whether a line of the ansi frame is a row of the building (only map characters)."""
    return bool(line) and set(line) <= _MAP_CHARACTERS
