"""What `arbiter run` prints at its end — after a whole batch, or what was done before an interrupt: the
summary table, the model's use and cost, and hints whose commands run where the user is
(support.command_name)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from arbiter.cli.support import command_name
from arbiter.record.drift import alarm_line
from arbiter.record.packets import unreadable

out = Console()


def print_summary(summary: dict[str, Any]) -> None:
    """The run's summary table and what follows it (summary.json's figures, never a document's text)."""
    arbiter = command_name()
    title = f"Run {summary['run_id']}" + (" (interrupted: done so far)" if summary.get("interrupted") else "")
    table = Table(title=title, show_lines=False)
    table.add_column("outcome")
    table.add_column("documents", justify="right")
    table.add_row("[green]accepted first time[/]", str(summary["accepted_first_time"]))
    table.add_row("[green]accepted after fixes[/]", str(summary["accepted_after_fixes"]))
    table.add_row("[yellow]escalated to an SME[/]", str(summary["escalated"]))
    for reason, count in summary["escalated_by_reason"].items():
        table.add_row(f"  [dim]{reason}[/]", str(count))
    table.add_row("[red]could not be verified (escalated)[/]", str(summary["errors"]))
    for reason, count in summary["errors_by_reason"].items():
        table.add_row(f"  [dim]{reason}[/]", str(count))
    if summary.get("pending_llm_batch"):
        table.add_row("[blue]waiting for the LLM batch job[/]", str(summary["pending_llm_batch"]))
    table.add_row("total", str(summary["documents"]))
    out.print(table)
    earned = summary.get("accepted_by_semantic_checks") or {}
    if any(earned.values()):
        out.print(
            f"Accepted on rules only: {earned.get('rules_only', 0)}; "
            f"rules and a model: {earned.get('rules_and_model', 0)}."
        )
    blind = summary.get("blind_samples") or {}
    if any(blind.values()):
        out.print(
            f"Queued for blind review as well: {blind.get('AUDIT', 0)} audit(s) of accepted documents, "
            f"{blind.get('SECOND_REVIEW', 0)} second review(s) of escalations."
        )
    for alarm in (summary.get("drift") or {}).get("alarms") or []:
        out.print(escape(alarm_line(alarm)), style="bold red", soft_wrap=True)
    unreadable_files = sum(n for reason, n in summary["errors_by_reason"].items() if unreadable(reason))
    if unreadable_files:
        out.print(
            f"{unreadable_files} unreadable file(s) wait in the operations lane, not the SME queue: "
            f"{arbiter} ops list --out {summary['output_dir']}",
            soft_wrap=True,
        )
    llm = summary.get("llm") or {}
    if llm.get("backend", "none") != "none":
        out.print(
            f"LLM {llm['backend']} {llm.get('model', '')}: {llm.get('calls', 0)} call(s), "
            f"{llm.get('cache_hits', 0)} from cache, {llm.get('input_tokens', 0)}+{llm.get('output_tokens', 0)} "
            f"tokens, {cost_text(llm.get('cost_usd'), llm['backend'])}"
        )
        for note in llm.get("notes") or []:  # e.g. the replay backend's misses and how to record them
            out.print(note, soft_wrap=True)
    job = summary.get("llm_batch_job")
    if job:
        out.print(
            f"Submitted batch job {job['name']} with {job['requests']} request(s). When it has finished, run: "
            f"{arbiter} run --resume-batch {job['id']} --out {summary['output_dir']}"
        )
    skipped = summary["skipped_unchanged"]
    extra = (
        f"; {skipped} unchanged since an earlier run were skipped (use --force to redo)" if skipped else ""
    )
    out.print(
        f"{summary['processed']} processed in {summary['duration_s']} s{extra}. "
        f"Summary: {Path(summary['output_dir']) / 'runs' / summary['run_id'] / 'summary.json'}"
    )


def cost_text(cost: float | None, backend: str = "") -> str:
    """The run's estimated LLM cost; unknown (never $0) when the model has no known price. Replayed answers
    cost nothing: what they would have cost live is said as such."""
    if cost is None:
        return "cost unknown (no price for this model)"
    if backend == "replay":
        return f"would cost about ${cost:.4f} live; nothing spent (replay)"
    return f"about ${cost:.4f}"
