"""Hidden Profile's replay drawing: the HTML viewer's canvas code beside this module (`drawing.js`),
found through the paradigm's declaration. Its ansi frame has no map rows to colour."""

TERMINAL_COLOURS: dict[str, str] = {}


def is_map_row(line: str) -> bool:
    return False
