"""The `teamenvs` command line: list environments, run episodes, benchmark suites, reports and replays.

    teamenvs list
    teamenvs run day_trader_v0 --policy scripted --seed 0 --episodes 5 --set n_agents=6 --log-dir runs
    teamenvs bench --suite smoke --out results/smoke
    teamenvs report results/smoke
    teamenvs replay results/smoke/logs/<episode>.jsonl.gz --html episode.html
    teamenvs compile

This module is the application layer: it orchestrates the three packages, so it is the one module
under `teamenvs/` that imports `agents` and `benchmarks` (inside the command functions, so importing
the env library never pulls them in). Everything else in `teamenvs` imports neither.

What it prints of logs, suites, configs and model replies shows control characters escaped
(`teamenvs.core.text.printable`); error messages are cut to `ERROR_MAX_CHARS`, and values that
look like API keys are masked in them, argparse's included (it echoes unknown arguments).
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from pathlib import Path
from typing import Any, Callable, Mapping, NoReturn, Sequence

from teamenvs.core.config import ConfigError, describe_config, range_text
from teamenvs.core.constrain import CONSTRAIN_MODES
from teamenvs.core.metrics import mean_sd
from teamenvs.core.text import close_match, excerpt, printable
from teamenvs.registry import make, paradigms

ERROR_MAX_CHARS = 2000
MASK = "***"
SECRET_WORDS = frozenset({"key", "apikey", "token", "secret", "password", "passwd", "credential", "credentials", "auth"})
KEY_PREFIXES = ("sk-", "sk_", "pk-", "rk-", "hf_", "ghp_", "gho_", "ghs_", "ghu_", "github_pat_", "glpat-", "xoxb-", "xoxp-", "AKIA", "AIza")
KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
QUOTES = "'\"`,;()[]{}<>"
WHITESPACE_RUN = re.compile(r"(\s+)")
NAME_PARTS = re.compile(r"[-_.]")


def looks_like_key(word: str) -> bool:
    """Whether `word` (quotes and brackets around it ignored) looks like an API key: a known key
    prefix, or a long token mixing upper case, lower case and digits."""
    core = word.strip(QUOTES)
    if core.startswith(KEY_PREFIXES) and len(core) >= 8:
        return True
    return (len(core) >= 20 and set(core) <= KEY_CHARS and any(c.isdigit() for c in core)
            and any(c.isupper() for c in core) and any(c.islower() for c in core))


def _names_secret(option: str) -> bool:
    """Whether an option or setting name is one of a secret (`--api-key`, `--token`, `api_key`; not `--token-budget`)."""
    parts = NAME_PARTS.split(option.strip(QUOTES).lower())
    return "budget" not in parts and not SECRET_WORDS.isdisjoint(parts)  # a token budget is a number of tokens


def _mask(word: str) -> str:
    core = word.strip(QUOTES)
    start = word.find(core) if core else len(word)
    return word[:start] + MASK + word[start + len(core):]


def mask_secrets(text: str) -> str:
    """`text` with every word that looks like an API key, and the value given to an option named like
    one (`--api-key VALUE`, `--token=VALUE`, `api_key=VALUE`), replaced by `***`."""
    parts = WHITESPACE_RUN.split(text)  # words at even indices, the whitespace between them at odd ones
    hide_next = False
    for i in range(0, len(parts), 2):
        word = parts[i]
        if not word:
            continue
        name, sep, value = word.partition("=")
        if hide_next or looks_like_key(word):
            parts[i] = _mask(word)
        elif sep and value and (_names_secret(name) or looks_like_key(value)):
            parts[i] = f"{name}={_mask(value)}"
        hide_next = word.strip(QUOTES).startswith("-") and not sep and not word.endswith(":") and _names_secret(word)
    return "".join(parts)


def error_text(message: Any) -> str:
    """An error message fit for the terminal: API keys masked, control characters escaped, cut to ERROR_MAX_CHARS."""
    text = printable(mask_secrets(str(message)[: 4 * ERROR_MAX_CHARS]))
    if len(text) > ERROR_MAX_CHARS:
        text = text[: ERROR_MAX_CHARS - 3] + "..."
    return text


class ArgumentParser(argparse.ArgumentParser):
    """argparse, with its error messages (which echo the arguments given) passed through `error_text`,
    and no abbreviated options: `--token KEY` must not silently become `--token-budget KEY`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {error_text(message)}{self._nearest_options(message)}\n")

    def _nearest_options(self, message: str) -> str:
        """For unrecognized options (`--polciy`), the nearest options of this parser and its commands, as a hint."""
        if not message.startswith("unrecognized arguments:"):
            return ""
        known = {o for a in self._actions for o in a.option_strings}
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                known |= {o for p in action.choices.values() for a in p._actions for o in a.option_strings}
        hints = []
        for word in message.split(":", 1)[1].split():
            option = word.split("=", 1)[0]
            near = close_match(option, sorted(o for o in known if o.startswith("--"))) if option.startswith("--") else None
            if near:
                hints.append(f"'{near}' for {excerpt(option)}")
        return f" (did you mean {', '.join(hints)}?)" if hints else ""


def _parse_sets(pairs: Sequence[str]) -> dict[str, str]:
    values: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set expects setting=value, got {excerpt(pair)}")  # ("key=..." would be masked as a secret)
        values[key.strip()] = value.strip()
    return values


def _mean_sd(xs: Sequence[float]) -> str:
    if len(xs) < 2:
        return f"{xs[0]:.3f}"
    mean, sd = mean_sd(xs)
    return f"{mean:.3f} +- {sd:.3f}"


def _statistics(results: Sequence[Any]) -> list[str]:
    """`format_summary`'s tables of per-agent returns and scalar metrics (mean +- population sd) over `results`."""
    lines = []
    agents = list(results[0].returns)
    width = max(len(a) for a in agents + ["metric"]) + 2
    lines.append("")
    lines.append(f"{'agent':<{width}}return")
    for a in agents:
        lines.append(f"{a:<{width}}{_mean_sd([r.returns[a] for r in results])}")
    def number(v: Any) -> bool:
        return isinstance(v, (int, float))

    # a metric may be undefined (None) in some episodes, e.g. an acceptance rate without offers
    scalar = [k for k in results[0].metrics if any(number(r.metrics.get(k)) for r in results)]
    width = max(len(k) for k in scalar + ["metric"]) + 2
    lines.append("")
    lines.append(f"{'metric':<{width}}value")
    for key in scalar:
        values = [float(r.metrics[key]) for r in results if number(r.metrics.get(key))]
        note = f"  ({len(values)} of {len(results)} episodes; undefined in the others)" if len(values) < len(results) else ""
        lines.append(f"{key:<{width}}{_mean_sd(values)}{note}")
    return lines


def format_summary(env_id: str, policy: str, results: Sequence[Any]) -> str:
    """A readable summary of episodes: per-agent returns and the scalar metrics (mean +- population sd) over the
    complete episodes, as in the bench reports: an episode stopped by the model-call or token budget (status "budget")
    played only part of its steps, so it is left out, and the summary says how many were; the model usage covers all."""
    seeds = ", ".join(str(r.seed) for r in results)
    lines = [f"{env_id} | policy {policy} | {len(results)} episode(s), seeds {seeds}"]
    complete = [r for r in results if r.status != "budget"]
    stopped = len(results) - len(complete)
    if stopped:
        counted = ("no episode is complete, so there are no returns or metrics to show (raise --max-calls or --token-budget)"
                   if not complete else f"the numbers below cover the {len(complete)} complete episode(s), "
                   f"seed{'s' if len(complete) > 1 else ''} {', '.join(str(r.seed) for r in complete)}")
        lines.append(f"{stopped} stopped by the budget, not counted (their returns and metrics cover only the steps played); {counted}")
    if complete:
        lines += _statistics(complete)
    used = [r.usage["total"] for r in results if getattr(r, "usage", None)]
    if used:
        lines.append("")
        keys = ("calls", "retries", "cached", "prompt_tokens", "completion_tokens")
        from agents.llm.client import cache_note

        totals = {k: sum(u[k] for u in used) for k in keys}
        lines.append("model usage (all episodes): " + ", ".join(f"{k} {totals[k]:,}" for k in keys) + cache_note(totals))
        if any("cost_usd" in u for u in used):
            lines.append(f"estimated cost: ${sum(u.get('cost_usd', 0.0) for u in used):.4f}")
    logs = [str(r.log_path) for r in results if r.log_path is not None]
    if logs:
        lines.append("")
        lines.append(f"logs: {logs[0]}" + (f" (+{len(logs) - 1} more in the same folder)" if len(logs) > 1 else ""))
    return printable("\n".join(lines))


def format_info(env_id: str) -> str:
    """What `teamenvs info ENV` prints: roles, presets, baselines, config keys (range, default, doc), metrics."""
    from teamenvs.core.policy import baselines, default_baseline
    from teamenvs.registry import spec

    paradigm = spec(env_id)
    env = make(env_id)
    lines = [f"{paradigm.env_id} ({paradigm.gym_id}): {paradigm.title}", paradigm.summary, "",
             f"agents (default config): {', '.join(env.possible_agents)}",
             f"presets (combine with '+'): {', '.join(type(env).presets) or '(none)'}",
             f"baselines: scripted (= {default_baseline(env_id)}), {', '.join(baselines(env_id))}", "", "config keys:"]
    for row in describe_config(type(env.config)):
        bounds = ""
        if row["choices"]:
            bounds = " one of " + ", ".join(map(str, row["choices"]))
        elif row["low"] is not None or row["high"] is not None:
            bounds = " " + range_text(row["low"], row["high"])
        lines.append(f"  {row['key']} = {getattr(env.config, row['key'])!r}{bounds}" + (f": {row['doc']}" if row["doc"] else ""))
    goals = getattr(type(env), "metric_goals", {})
    lines += ["", "metrics with a direction (the rest are counts and context): "
              + ", ".join(f"{k} ({'higher' if v == 'max' else 'lower'} is better)" for k, v in goals.items())]
    return printable("\n".join(lines))


def _cmd_info(args: argparse.Namespace) -> int:
    print(format_info(args.env_id))
    return 0


class RunProgress:
    """`teamenvs run`'s progress on stderr: one line redrawn in place on a terminal, a line every
    `every` seconds when redirected (so a log file keeps the model usage as it grows)."""

    def __init__(self, stream: Any = None, every: float = 10.0) -> None:
        import time

        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.every, self._clock, self._last = every, time.monotonic, float("-inf")
        self.label = ""

    def line(self, steps: int, usage: Mapping[str, Any]) -> str:
        text = f"{self.label}: step {steps}"
        if usage:
            text += f", {usage.get('calls', 0):,} calls, {usage.get('prompt_tokens', 0) + usage.get('completion_tokens', 0):,} tokens"
        return text

    def __call__(self, steps: int, usage: Mapping[str, Any]) -> None:
        now = self._clock()
        if self.tty:
            self.stream.write("\r" + printable(self.line(steps, usage), keep_newlines=False) + "\x1b[K")
            self.stream.flush()
        elif now - self._last >= self.every:
            self._last = now
            print(printable(self.line(steps, usage)), file=self.stream, flush=True)

    def done(self) -> None:
        if self.tty:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def _cmd_list(args: argparse.Namespace) -> int:
    listed = paradigms()
    ids = max((len(p.env_id) for p in listed), default=0)
    gym_ids = max((len(p.gym_id) for p in listed), default=0)
    for paradigm in listed:
        print(printable(f"{paradigm.env_id:<{ids}}  {paradigm.gym_id:<{gym_ids}}  {paradigm.summary}"))
    return 0


def _note_renamed(renamed: Sequence[Path], log_dir: str) -> None:
    """Say on stderr which logs got a new name because a log of the same name was already in `log_dir`."""
    if renamed:
        print(printable(f"note: {len(renamed)} log name(s) were already taken in {log_dir}, so those logs got the next free "
                        f"name (first: {renamed[0]}); run never overwrites a log"), file=sys.stderr)


def _cmd_run(args: argparse.Namespace) -> int:
    import agents
    from benchmarks.suite import MAX_EPISODES

    config = _parse_sets(args.set)
    if args.preset:
        config["preset"] = args.preset
    env = make(args.env_id, **config)
    if not 1 <= args.episodes <= MAX_EPISODES:  # each episode writes a log: a typo of a few digits would fill the disk
        raise ConfigError(f"--episodes must be from 1 to {MAX_EPISODES:,} (a bench suite's limit too), got {excerpt(args.episodes)}")
    llm_only = {"--constrain": args.constrain != "off", "--timeout": args.timeout is not None, "--concurrency": args.concurrency is not None,
                "--temperature": args.temperature is not None, "--max-calls": args.max_calls is not None,
                "--token-budget": args.token_budget is not None, "--max-output-tokens": args.max_output_tokens is not None,
                "--context-window": args.context_window is not None}
    given = [flag for flag, set_ in llm_only.items() if set_]
    if args.policy != "llm" and given:
        raise ConfigError(f"{', '.join(given)} go{'es' if len(given) == 1 else ''} with --policy llm, not --policy {args.policy}")
    args.temperature = 0.0 if args.temperature is None else args.temperature
    if args.policy == "llm":
        args.timeout = 60.0 if args.timeout is None else args.timeout
        args.concurrency = 16 if args.concurrency is None else args.concurrency
        from benchmarks.bench import check_token_options

        args.max_output_tokens = 512 if args.max_output_tokens is None else args.max_output_tokens
        check_token_options(args.max_output_tokens, args.context_window)
    server = None
    if args.policy == "llm":
        if not args.model:
            raise ConfigError("--policy llm needs --model (e.g. --model gpt-4o-mini, or --model random-valid for the built-in server)")
        from agents.llm.server import resolve_endpoint

        base_url, server = resolve_endpoint(args.model, args.base_url)
    elif args.model or args.base_url:
        raise ConfigError("--model and --base-url go with --policy llm")
    results, renamed = [], []
    label = f"llm-{args.model}" if args.policy == "llm" else args.policy.replace(",", "+")
    run = None
    if args.policy == "llm":  # what changes an llm episode's results, in its header, as bench records it: the report
        from benchmarks.bench import recorded_settings  # shows runs under other settings apart, never in one cell

        run = {"model": args.model, "settings": {
            **recorded_settings(args.base_url, args.temperature, args.max_output_tokens, args.max_calls, args.token_budget,
                                args.context_window), "constrain": args.constrain}}
    progress = RunProgress()
    try:
        for k in range(args.episodes):
            seed = args.seed + k
            progress.label = f"{args.env_id} episode {k + 1}/{args.episodes} (seed {seed})"
            if args.policy == "llm":
                from agents.llm.policy import make_llm_policies

                policies = make_llm_policies(
                    env, args.model, base_url, max_calls=args.max_calls, token_budget=args.token_budget,
                    temperature=args.temperature, seed=seed, timeout=args.timeout, concurrency=args.concurrency,
                    constrain=args.constrain, max_tokens=args.max_output_tokens, context_window=args.context_window,
                    # a built-in server started for this run has a new port each time: its replies could never be reused
                    cache=False if server is not None else None,
                )
            else:
                policies = agents.make_policies(env, args.policy, seed=seed)
            name = f"{args.env_id}_{label.replace('/', '_')}_seed{seed}"
            log_name = agents.claim_log_name(args.log_dir, name)
            if log_name != name:
                renamed.append(Path(args.log_dir) / f"{log_name}.jsonl")
            result = agents.run_episode(env, policies, seed=seed, log_dir=args.log_dir, max_steps=args.max_steps,
                                        log_name=log_name, on_step=progress, run=run)
            results.append(result)
    except KeyboardInterrupt:
        progress.done()
        print(printable(f"interrupted: {len(results)} of {args.episodes} episode(s) done; their logs are in {args.log_dir}"),
              file=sys.stderr)
        if results:
            print(format_summary(args.env_id, label, results))
        _note_renamed(renamed, args.log_dir)
        return 130
    finally:
        progress.done()
        if server is not None:
            server.stop()
    print(format_summary(args.env_id, label, results))
    _note_renamed(renamed, args.log_dir)
    for result in results:
        if result.status == "budget":  # a clean stop: the summary above covers the steps played
            print(printable(f"warning: seed {result.seed}: {result.warning}"), file=sys.stderr)
    return 0


def _cmd_serve_llm(args: argparse.Namespace) -> int:
    from agents.llm.server import MODELS, LocalLLMServer

    server = LocalLLMServer(port=args.port, seed=args.seed)
    print(f"teamenvs offline OpenAI-compatible server at {server.url} (models: {', '.join(MODELS)}); Ctrl-C stops it.", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from benchmarks.bench import run_bench
    from benchmarks.suite import OFFLINE_BY_DEFAULT, load_suite

    suite = load_suite(args.suite, seeds=args.seeds)
    if suite.name in OFFLINE_BY_DEFAULT and not args.model and not args.base_url and not os.environ.get("OPENAI_BASE_URL"):
        args.model = "random-valid"  # the built-in offline server, which says it is a test double
    model_options = {"--concurrency": args.concurrency, "--timeout": args.timeout, "--temperature": args.temperature,
                     "--max-calls": args.max_calls, "--token-budget": args.token_budget, "--price": args.price,
                     "--max-output-tokens": args.max_output_tokens, "--context-window": args.context_window}
    given = [name for name, value in model_options.items() if value is not None]
    if given and not suite.needs_model:  # (as `run` refuses them without --policy llm: they would be ignored)
        raise ConfigError(f"suite {printable(suite.name)!r} has no llm policies, so {', '.join(given)} would not be used")
    outcome = run_bench(
        suite, args.out, model=args.model, base_url=args.base_url, workers=args.workers,
        concurrency=16 if args.concurrency is None else args.concurrency, force=args.force, progress=not args.quiet,
        temperature=0.0 if args.temperature is None else args.temperature, max_calls=args.max_calls,
        token_budget=args.token_budget, price=args.price, episode_timeout=args.episode_timeout or None,
        timeout=60.0 if args.timeout is None else args.timeout,
        max_output_tokens=512 if args.max_output_tokens is None else args.max_output_tokens,
        context_window=args.context_window, plots=args.plots,
    )
    print(printable(outcome.summary()))
    return 0 if not outcome.failed and outcome.report_error is None else 1


def _cmd_report(args: argparse.Namespace) -> int:
    from benchmarks.report import build_report

    report = build_report(args.dir, plots=args.plots)
    print(printable(report.summary()))
    return 0


def _cmd_compile(args: argparse.Namespace) -> int:
    from teamenvs import compiled

    root = Path(args.dir).expanduser() if args.dir else None
    if args.status:
        print(printable(compiled.status(root=root).summary()))
        return 0
    if args.jobs is not None and args.jobs < 1:
        raise ValueError(f"--jobs must be at least 1, got {args.jobs}")
    modules = compiled.package_modules()
    if args.only is not None:  # (an empty --only names no module: not every module)
        wanted = [name.strip() for name in args.only.split(",") if name.strip()]
        unknown = [w for w in wanted if not any(n == w or n.startswith(w + ".") for n in modules)]
        if unknown or not wanted:
            raise ValueError(f"--only names no module the engine compiles: {excerpt(', '.join(unknown) or args.only)} "
                             "(e.g. teamenvs.day_trader or teamenvs.core.env; `teamenvs compile --status` lists them)")
        modules = {n: p for n, p in modules.items() if any(n == w or n.startswith(w + ".") for w in wanted)}
    try:
        built = compiled.compile_modules(modules, root=root, jobs=args.jobs, echo=lambda text: print(text, flush=True))
    except compiled.CompileError as exc:
        print(f"error: {error_text(exc)}", file=sys.stderr)
        return 2
    print(printable(built.summary()))
    if os.environ.get(compiled.ENV_DIR) is None and root is not None:
        print(f"note: set {compiled.ENV_DIR}={printable(str(root))} for teamenvs to load them from there")
    return 0


def _cmd_replay(args: argparse.Namespace) -> int:
    from teamenvs import replay

    if args.html:
        path = replay.write_html(args.log, args.html)
        print(printable(f"wrote {path} (open it in a browser; it needs no network)"))
        return 0
    # Colours only on a terminal: piped into a file or `less`, the escape codes would be noise. NO_COLOR
    # (https://no-color.org) turns them off on a terminal too.
    color = not args.no_color and not os.environ.get("NO_COLOR") and sys.stdout.isatty()
    replay.play(args.log, delay=args.delay, start=args.step, stop=args.stop, color=color)
    return 0


PLOTS_HELP = ("figure formats to write, comma-separated: png, svg, pdf (default: all three; png alone is about twice as quick), "
              "or none (draw them later with teamenvs report --plots)")


def _shown(text: str) -> str:
    return repr(printable(text)[:40])


def whole_number(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number from `low` (to `high`). It raises ArgumentTypeError, so argparse's
    error names the option and exits 2."""
    def parse(text: str) -> int:
        value: int | None
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"expected a whole number {range_text(low, high)}, got {_shown(text)}")
        return value
    return parse


def finite_number(low: float, high: float | None = None, *, above: bool = False) -> Callable[[str], float]:
    """An argparse type: a finite number (not NaN or inf) from `low` (to `high`); above `low` with `above`."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and (value > low if above else value >= low) and (high is None or value <= high)):
            bounds = f"> {low:g}" if above else range_text(f"{low:g}", None if high is None else f"{high:g}")
            raise argparse.ArgumentTypeError(f"expected a finite number {bounds}, got {_shown(text)}")
        return value
    return parse


def path_arg(text: str) -> str:
    """An argparse type: a path that is not empty (an empty one named the current folder, or nothing at all)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a path, got {_shown(text)}")
    return text


SEED = whole_number(0)  # numpy's generators refuse negative seeds, and bench suites do too
COUNT = whole_number(1)  # model calls, tokens, steps, requests in flight
SECONDS = finite_number(0, above=True)
TEMPERATURE = finite_number(0, 2)  # the range the OpenAI API accepts


def context_window_arg(text: str) -> int | str:
    """`--context-window`: a whole number of tokens, or 'auto'."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of tokens or 'auto', got {_shown(text)}") from None


class RenamedOption(argparse.Action):
    """`--max-tokens`, which meant the episode's token budget: refused with what to write instead,
    since the API's `max_tokens` is a reply's output limit."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        kwargs.pop("nargs", None)
        super().__init__(option_strings, dest, nargs="?", **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any, option_string: str | None = None) -> None:
        parser.error("--max-tokens is ambiguous and was renamed: --token-budget N bounds the tokens of a whole episode, "
                     "--max-output-tokens N bounds each reply")


def build_parser() -> argparse.ArgumentParser:
    from teamenvs._version import __version__

    parser = ArgumentParser(prog="teamenvs", description="Multi-agent team-science environments.")
    parser.add_argument("--version", action="version", version=f"teamenvs {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p_info = sub.add_parser("info", help="an env's agents, presets, baselines, config keys (ranges, defaults) and metrics")
    p_info.add_argument("env_id", help="e.g. commons_v0 (teamenvs list shows them all)")
    p_info.set_defaults(func=_cmd_info)
    p_list = sub.add_parser("list", help="list registered environments")
    p_list.set_defaults(func=_cmd_list)
    p_run = sub.add_parser("run", help="run seeded episodes with scripted, random, baseline or LLM policies")
    p_run.add_argument("env_id")
    p_run.add_argument("--policy", default="scripted", help="scripted | random | a baseline name | comma list, one per agent | llm")
    p_run.add_argument("--seed", type=SEED, default=0, help="seed of the first episode (episode k uses seed+k)")
    p_run.add_argument("--episodes", type=int, default=1)
    p_run.add_argument("--preset", default=None, help="a named condition, e.g. group_size_6")
    p_run.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="config override (repeatable)")
    p_run.add_argument("--log-dir", type=path_arg, default="runs", help="folder for the JSONL episode logs (default: runs)")
    p_run.add_argument("--model", default=None, help="with --policy llm: the model name at the endpoint")
    p_run.add_argument("--base-url", default=None, help="with --policy llm: an OpenAI-compatible endpoint (default: OPENAI_BASE_URL, else the built-in offline server)")
    p_run.add_argument("--temperature", type=TEMPERATURE, default=None, help="with --policy llm: 0 to 2 (default 0; the response cache is on at 0)")
    p_run.add_argument("--max-calls", type=COUNT, default=None, help="with --policy llm: model calls allowed per episode")
    p_run.add_argument("--token-budget", type=COUNT, default=None, help="with --policy llm: tokens (prompt + completion) allowed per episode")
    p_run.add_argument("--max-output-tokens", type=COUNT, default=None, help="with --policy llm: each reply's output limit (default 512)")
    p_run.add_argument("--context-window", type=context_window_arg, default=None, metavar="TOKENS|auto",
                       help="with --policy llm: fit every prompt and its reply into this many tokens ('auto': as the server states it)")
    p_run.add_argument("--max-tokens", action=RenamedOption, help=argparse.SUPPRESS)
    p_run.add_argument("--max-steps", type=COUNT, default=None, help="stop each episode after this many env steps")
    p_run.add_argument("--timeout", type=SECONDS, default=None, help="with --policy llm: seconds per model call (default 60)")
    p_run.add_argument("--concurrency", type=COUNT, default=None,
                       help="with --policy llm: model calls in flight at once (default 16; 1 for a server that answers one at a time)")
    p_run.add_argument("--constrain", default="off", choices=CONSTRAIN_MODES,
                       help="with --policy llm: constrained decoding of replies (json: response_format json_schema; "
                            "json_object: response_format json_object with a schema, for llama-cpp-python's server; "
                            "grammar: llama.cpp GBNF; regex: vLLM guided_regex)")
    p_run.set_defaults(func=_cmd_run)
    p_serve = sub.add_parser("serve-llm", help="serve the offline OpenAI-compatible test server (random-valid, echo)")
    p_serve.add_argument("--port", type=int, default=8765)
    p_serve.add_argument("--seed", type=SEED, default=0)
    p_serve.set_defaults(func=_cmd_serve_llm)
    p_bench = sub.add_parser("bench", help="run a benchmark suite (seeded episodes in parallel, resumable) and write its report")
    p_bench.add_argument("--suite", required=True, help="smoke | paper | llm | llm-smoke | a suite file (.json, .yaml)")
    p_bench.add_argument("--out", type=path_arg, required=True, help="output folder: logs/, results.csv, report.md, plots/")
    p_bench.add_argument("--seeds", type=int, default=None, help="seeds per cell, overriding the suite's")
    p_bench.add_argument("--workers", type=int, default=None, help="processes for scripted episodes (default: CPU count)")
    p_bench.add_argument("--force", action="store_true", help="rerun episodes whose logs are already complete")
    p_bench.add_argument("--quiet", action="store_true", help="no progress bar")
    p_bench.add_argument("--model", default=None, help="the model for the suite's llm policies (llm-smoke without --base-url: "
                         "random-valid on the built-in offline server)")
    p_bench.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint (default: OPENAI_BASE_URL, else the built-in offline server)")
    p_bench.add_argument("--concurrency", type=COUNT, default=None, help="model calls in flight at once, over all episodes (default 16)")
    p_bench.add_argument("--timeout", type=SECONDS, default=None, help="seconds per model call (default 60)")
    p_bench.add_argument("--temperature", type=TEMPERATURE, default=None, help="0 to 2 (default 0)")
    p_bench.add_argument("--max-calls", type=COUNT, default=None, help="model calls allowed per episode")
    p_bench.add_argument("--token-budget", type=COUNT, default=None, help="tokens (prompt + completion) allowed per episode")
    p_bench.add_argument("--max-output-tokens", type=COUNT, default=None, help="each reply's output limit (default 512)")
    p_bench.add_argument("--context-window", type=context_window_arg, default=None, metavar="TOKENS|auto",
                         help="fit every prompt and its reply into this many tokens ('auto': as the server states it)")
    p_bench.add_argument("--max-tokens", action=RenamedOption, help=argparse.SUPPRESS)
    p_bench.add_argument("--price", default=None, metavar="IN,OUT", help="USD per 1M prompt and completion tokens, for the cost estimate")
    p_bench.add_argument("--episode-timeout", type=finite_number(0), default=3600.0, metavar="SECONDS",
                         help="wall-clock limit per episode; an episode past it is stopped and reported as failed (default 3600; 0: none)")
    p_bench.add_argument("--plots", default=None, metavar="FORMATS", help=PLOTS_HELP)
    p_bench.set_defaults(func=_cmd_bench)
    p_report = sub.add_parser("report", help="rebuild results.csv, report.md and plots of a bench folder from its logs alone")
    p_report.add_argument("dir", type=path_arg)
    p_report.add_argument("--plots", default=None, metavar="FORMATS", help=PLOTS_HELP)
    p_report.set_defaults(func=_cmd_report)
    p_compile = sub.add_parser("compile", help="build the compiled engine (Cython): the same episodes, about 1.5x faster steps")
    p_compile.add_argument("--status", action="store_true", help="say which modules load compiled, and build nothing")
    p_compile.add_argument("--only", default=None, metavar="MODULES", help="compile only these modules or packages, "
                           "comma-separated (e.g. teamenvs.core,teamenvs.day_trader)")
    p_compile.add_argument("--jobs", type=int, default=None, help="C compilers at a time (default: the CPU count)")
    p_compile.add_argument("--dir", type=path_arg, default=None, help="where to keep the compiled modules (default: TEAMENVS_COMPILED_DIR, "
                           "else ~/.cache/teamenvs/compiled)")
    p_compile.set_defaults(func=_cmd_compile)
    p_replay = sub.add_parser("replay", help="replay an episode log in the terminal, or write a self-contained HTML viewer")
    p_replay.add_argument("log", type=path_arg, help="an episode log (.jsonl or .jsonl.gz)")
    p_replay.add_argument("--html", type=path_arg, default=None, metavar="OUT", help="write the HTML viewer to OUT instead")
    p_replay.add_argument("--delay", type=float, default=0.0, help="seconds between frames (default 0: print them all)")
    p_replay.add_argument("--step", type=int, default=0, help="first step to show")
    p_replay.add_argument("--stop", type=int, default=None, help="last step to show")
    p_replay.add_argument("--no-color", action="store_true", help="plain text, no ANSI colours (the default when stdout is not a terminal, or NO_COLOR is set)")
    p_replay.set_defaults(func=_cmd_replay)
    return parser


def _stdout_closed() -> bool:
    """Whether stdout is a pipe whose reader has closed it (a broken pipe elsewhere is an ordinary error)."""
    import select

    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):  # no file descriptor, or no poll on this platform
        return False


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        if args.command == "bench":
            print("interrupted: the logs written so far are kept; rerun the same command to resume "
                  "(bench skips every episode whose log is complete)", file=sys.stderr)
        else:
            print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError as exc:
        if not _stdout_closed():
            print(f"error: {error_text(exc)}", file=sys.stderr)
            return 2
        # The reader went away (`teamenvs replay LOG | head`): stop quietly, as a shell tool does. Point
        # stdout at /dev/null so the interpreter's flush at exit does not raise the same error again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + 13  # what a shell reports for a process stopped by SIGPIPE
    except (ConfigError, ValueError, OSError) as exc:  # (an unknown env id too: `UnknownEnvError` is a ConfigError)
        print(f"error: {error_text(exc)}", file=sys.stderr)
        return 2
    except RuntimeError as exc:
        from agents.llm.client import LLMError

        if not isinstance(exc, LLMError):
            raise
        print(f"error: {error_text(exc)}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
