"""Shape Factory's replay drawing: the HTML viewer's canvas code beside this module (`drawing.js`:
each factory's money, inventory, orders and production, and the open offers), found through the
paradigm's declaration. The ansi frame is a table and has no map rows to colour."""

TERMINAL_COLOURS: dict[str, str] = {}


def is_map_row(line: str) -> bool:
    """The frame has no map rows."""
    return False
