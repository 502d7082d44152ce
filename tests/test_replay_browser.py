"""The HTML replay viewer in a real headless Chromium: it loads cleanly, its controls change what is shown, it draws.

Needs Python playwright and a Chromium at /usr/bin/chromium; without them the tests are
skipped, unless TEAMENVS_REQUIRE_BROWSER=1 (as in CI), where they fail instead.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

import agents
import teamenvs
from teamenvs import replay
from teamenvs.core.recorder import read_log

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]
pytestmark = pytest.mark.slow  # a headless browser per module

EPISODES = {"search_rescue_v0": {"max_steps": 120}, "map_task_v0": {}, "day_trader_v0": {}}


def _unavailable(reason: str) -> None:
    if os.environ.get("TEAMENVS_REQUIRE_BROWSER") == "1":
        pytest.fail(f"TEAMENVS_REQUIRE_BROWSER=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("Python playwright is not installed (pip install playwright)")
    if not CHROMIUM.exists():
        _unavailable(f"no Chromium at {CHROMIUM}")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def viewers(tmp_path_factory) -> dict[str, tuple[Path, Path]]:
    """(log, html) per env."""
    folder = tmp_path_factory.mktemp("viewers")
    out = {}
    for env_id, config in EPISODES.items():
        env = teamenvs.make(env_id, **config)
        result = agents.run_episode(env, agents.make_policies(env, "scripted", seed=0), seed=0, log_dir=folder)
        out[env_id] = (Path(result.log_path), replay.write_html(result.log_path, folder / f"{env_id}.html"))
    return out


class Page:
    """A viewer page with every console error, page error and request recorded."""

    def __init__(self, browser, html: Path) -> None:
        self.page = browser.new_page(viewport={"width": 1400, "height": 1000})
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: self.errors.append(f"console: {m.text}") if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.goto(html.resolve().as_uri())

    def step(self) -> int:
        return int(self.page.inner_text("#step-num"))

    def observation(self, agent: str) -> str:
        return self.page.eval_on_selector(f'.agent[data-agent="{agent}"] pre.obs', "e => e.textContent")

    def canvas(self) -> str:
        return self.page.eval_on_selector("#grid", "c => c.toDataURL('image/png')")


def decode_png(data: bytes):
    try:
        from PIL import Image

        import numpy as np

        return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"), dtype=float) / 255.0
    except ImportError:
        import matplotlib.image

        return matplotlib.image.imread(io.BytesIO(data), format="png")[..., :3]


def observation_at(log: Path, step: int, agent: str) -> str:
    records = read_log(log)
    line = next(r for r in records if r["type"] == "step" and r["step"] == step) if step else records[1]
    return line["agents"][agent]["observation"]


def interesting_step(env_id: str, log: Path) -> int:
    """A step at which the view differs from the start (the map task: the first drawing)."""
    if env_id == "map_task_v0":
        return next(r["step"] for r in read_log(log) if r["type"] == "step" and any(e["type"] == "drawing" for e in r["events"]))
    return 40 if env_id == "search_rescue_v0" else 3


@pytest.mark.parametrize("env_id", list(EPISODES))
def test_viewer_loads_cleanly_and_its_slider_changes_the_view(browser, viewers, env_id):
    log, html = viewers[env_id]
    view = Page(browser, html)
    page = view.page
    agent = teamenvs.make(env_id).possible_agents[-1]
    n_steps = sum(1 for r in read_log(log) if r["type"] == "step")
    assert view.step() == 0 and page.get_attribute("#step-slider", "max") == str(n_steps)
    assert view.observation(agent) == observation_at(log, 0, agent)
    grid = env_id in ("search_rescue_v0", "map_task_v0")
    assert page.is_visible("#grid") == grid
    before = view.canvas() if grid else None

    k = interesting_step(env_id, log)
    page.fill("#step-slider", str(k))
    assert view.step() == k
    assert view.observation(agent) == observation_at(log, k, agent) != observation_at(log, 0, agent)
    if grid:
        assert view.canvas() != before
    page.click("#obs-mode button[data-mode=before]")
    assert view.observation(agent) == observation_at(log, k - 1, agent)
    page.click("#obs-mode button[data-mode=after]")

    page.click("#next")
    assert view.step() == k + 1
    page.keyboard.press("ArrowLeft")
    assert view.step() == k
    page.click("#timeline li:nth-child(3)")
    assert view.step() == int(page.get_attribute("#timeline li:nth-child(3)", "data-step"))

    page.select_option("#speed", "50")
    start = view.step()
    page.click("#play")
    page.wait_for_function(f"Number(document.getElementById('step-num').textContent) >= {start + 3}", timeout=5000)
    page.click("#play")
    paused = view.step()
    page.wait_for_timeout(150)
    assert view.step() == paused > start

    assert view.errors == []
    assert all(url.startswith(("file:", "data:", "about:")) for url in view.requests), view.requests
    page.close()


@pytest.mark.parametrize("env_id", list(EPISODES))
def test_viewer_screenshot_is_not_blank(browser, viewers, env_id):
    _, html = viewers[env_id]
    view = Page(browser, html)
    view.page.fill("#step-slider", "5")
    pixels = decode_png(view.page.screenshot())
    assert pixels.shape[0] >= 900 and pixels.shape[1] >= 1300
    assert pixels.std() > 0.08
    colours = {tuple(p) for p in (pixels[::7, ::7] * 255).round().astype(int).reshape(-1, 3)}
    assert len(colours) > 40
    if env_id != "day_trader_v0":
        canvas = decode_png(view.page.locator("#grid").screenshot())
        assert canvas.shape[0] > 200 and canvas.std() > 0.1
    assert view.errors == []
    view.page.close()


def test_viewer_of_a_cut_off_log_shows_what_there_is(browser, viewers, tmp_path):
    log, _ = viewers["search_rescue_v0"]
    lines = log.read_text(encoding="utf-8").splitlines()
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(lines[:32]) + "\n" + lines[32][:100], encoding="utf-8")
    view = Page(browser, replay.write_html(cut, tmp_path / "cut.html"))
    assert "no end line" in view.page.inner_text("#warnings")
    assert "no metrics" in view.page.inner_text("#metrics")
    view.page.click("#last")
    assert view.step() == 30
    assert view.errors == []
    view.page.close()
