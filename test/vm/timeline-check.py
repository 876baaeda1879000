#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# The boot timeline of a VM boot, checked on the host against sources it does not use (a `host` step
# of failure-initrd-journal.scenario, after the boot powered off):
#   - the record: the FOYER_TIMELINE field of foyer-timeline's journal entry, read from the root
#     disk's persistent journal ($FOYER_VM_DISK0, extracted with qemu-img and debugfs); it must be
#     the table the real root found in /run/foyer/timeline.tsv (printed on ttyS1 as "FOYER-TL: ");
#   - every unit the initrd's journal shows as started (PID 1's "Starting ..." entries, which name
#     their UNIT=, before the record was made) is in the table, started no later than the entry and
#     not much earlier; finished ones ("Started"/"Finished"/"Reached" entries) likewise;
#   - no unit starts while one it is ordered after (After=, from PID 1 in the initrd:
#     FOYER_TIMELINE_UNITS) is still starting;
#   - "foyer timeline --svg" of the table has one bar per row, in order, with the row's values, at
#     the place and with the width the chart's scale gives them; "foyer timeline" prints the table
#     unchanged.
# Usage: timeline-check.py (environment: FOYER_VM_DISK0, FOYER_VM_LOG, FOYER_VM_FOYER; or, instead of
# FOYER_VM_DISK0, FOYER_TIMELINE_JOURNAL: the journal as a run left it in $FOYER_VM_LOG.journal.json)
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

STARTING = "7d4958e842da4a758f6c1cdc7b36dcc5"   # SD_MESSAGE_UNIT_STARTING
STARTED = "39f53479d3a045ac8e11786248231fbf"    # SD_MESSAGE_UNIT_STARTED (JOB_RESULT=done)
# Until systemd-journald.service is up, PID 1 logs to the kernel log, whose entries have no UNIT=
# and MESSAGE_ID=, only the text; systemd 252 (and later) names the unit there first ("Starting
# NAME - DESCRIPTION...", status_unit_format=combined, the default).
START_VERBS = ("Starting ", "Mounting ", "Activating swap ")
DONE_VERBS = ("Started ", "Finished ", "Reached target ", "Mounted ", "Listening on ", "Found device ",
              "Activated swap ", "Set up automount ", "Created slice ")
# How much later than the state change journald may stamp PID 1's message (TCG, a loaded host).
SLACK_US = 10_000_000
# The kernel log's time stamps are the printk clock (local_clock), not CLOCK_MONOTONIC: the two drift
# apart (by some 65 ms after a minute under TCG). For entries from the kernel log, the table's time
# may be this much after the entry's.
KMSG_CLOCK_US = 1_000_000

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, file=sys.stderr)


def field(entry, name):
    v = entry.get(name)
    if isinstance(v, list) and v and isinstance(v[0], int):
        return bytes(v).decode("utf-8", "replace")
    if isinstance(v, list):     # a field given twice
        v = v[-1]
        if isinstance(v, list):
            return bytes(v).decode("utf-8", "replace")
    return v


def parse_ms(s):
    if s == "-":
        return None
    whole, _, frac = s.partition(".")
    return int(whole) * 1000 + int((frac + "000")[:3])


def parse_table(text):
    recorded, rows = None, []
    for line in text.splitlines():
        if line.startswith("# foyer boot timeline") and "; recorded at " in line:
            recorded = parse_ms(line.split("; recorded at ")[1])
        if line.startswith("#") or line == "kind\tname\tstart_ms\tend_ms" or not line:
            continue
        kind, name, start, end = line.split("\t")
        rows.append((kind, name, parse_ms(start), parse_ms(end)))
    return recorded, rows


def read_journal(disk, tmp):
    # A journal already read (FOYER_TIMELINE_JOURNAL=FILE, the .journal.json a run left), to rerun
    # the checks without a boot.
    if os.environ.get("FOYER_TIMELINE_JOURNAL"):
        with open(os.environ["FOYER_TIMELINE_JOURNAL"]) as f:
            return [json.loads(line) for line in f if line.strip()]
    raw = os.path.join(tmp, "root.raw")
    subprocess.run(["qemu-img", "convert", "-f", "qcow2", "-O", "raw", disk, raw], check=True)
    subprocess.run(["debugfs", "-R", "rdump /var/log/journal " + tmp, raw], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.unlink(raw)
    # -a: without it the JSON has null for fields over 4096 bytes (FOYER_TIMELINE_UNITS).
    out = subprocess.run(["journalctl", "-D", os.path.join(tmp, "journal"), "-o", "json", "-a", "--no-pager"],
                         check=True, capture_output=True, text=True).stdout
    # Kept next to the console log, to see what a failed check saw.
    with open(os.environ["FOYER_VM_LOG"] + ".journal.json", "w") as f:
        f.write(out)
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def when(entry):
    return int(entry.get("_SOURCE_MONOTONIC_TIMESTAMP") or entry["__MONOTONIC_TIMESTAMP"])


def main():
    foyer = os.environ["FOYER_VM_FOYER"]
    with tempfile.TemporaryDirectory() as tmp:
        entries = read_journal(os.environ.get("FOYER_VM_DISK0"), tmp)
        record = [e for e in entries if field(e, "SYSLOG_IDENTIFIER") == "foyer-timeline" and "FOYER_TIMELINE" in e]
        if len(record) != 1:
            fail(f"{len(record)} journal entries of foyer-timeline with FOYER_TIMELINE, not 1")
            return
        record = record[0]
        boot = record["_BOOT_ID"]
        table_text = field(record, "FOYER_TIMELINE")
        recorded, rows = parse_table(table_text)
        print(f"timeline: {len(rows)} rows, recorded at {recorded / 1000:.3f} ms; " +
              ", ".join(f"{k} {sum(1 for r in rows if r[0] == k)}" for k in ("unit", "device", "module")),
              file=sys.stderr)
        if recorded is None or not rows:
            fail("the table has no rows or no recording time")
            return
        for kind in ("unit", "device", "module"):
            if not any(r[0] == kind for r in rows):
                fail(f"no {kind} in the table")

        # What the real root found in /run.
        with open(os.environ["FOYER_VM_LOG"] + ".ttyS1", errors="replace") as f:
            run_rows = [line.rstrip("\r\n")[len("FOYER-TL: "):] for line in f if line.startswith("FOYER-TL: ")]
        if "\n".join(run_rows) + "\n" != table_text:
            fail(f"/run/foyer/timeline.tsv in the real root ({len(run_rows)} lines) is not the journal's record")

        # The initrd's part of the journal: this boot, up to PID 1's "Switching root.".
        entries = [e for e in entries if e.get("_BOOT_ID") == boot]
        switch = [when(e) for e in entries
                  if field(e, "MESSAGE") == "Switching root." and "1" in (e.get("_PID"), e.get("SYSLOG_PID"))]
        if not switch:
            fail("no \"Switching root.\" in the journal: the initrd's journal did not survive")
            return
        # PID 1's own entries carry _PID=1, those from the kernel log SYSLOG_PID=1 ("systemd[1]: ").
        initrd = [e for e in entries if when(e) <= switch[0] and "1" in (e.get("_PID"), e.get("SYSLOG_PID"))]
        units = {name: (start, end) for kind, name, start, end in rows if kind == "unit"}
        starting, done = {}, {}     # unit: (time, its allowance for the clock)
        from_kmsg = 0
        for e in initrd:
            t, unit, msg = when(e), field(e, "UNIT"), field(e, "MESSAGE") or ""
            if t > recorded:
                continue        # after the record: not in it
            if unit:
                if e.get("MESSAGE_ID") == STARTING and field(e, "JOB_TYPE") == "start":
                    starting[unit] = (t, 0)
                elif e.get("MESSAGE_ID") == STARTED and field(e, "JOB_RESULT") == "done":
                    done[unit] = (t, 0)
            elif e.get("_TRANSPORT") == "kernel" and " - " in msg:
                for verbs, into in ((START_VERBS, starting), (DONE_VERBS, done)):
                    verb = next((v for v in verbs if msg.startswith(v)), None)
                    if verb:
                        name = msg[len(verb):].split(" - ")[0]
                        if "." in name and " " not in name:
                            into[name] = (t, KMSG_CLOCK_US)
                            from_kmsg += 1
        checked = 0
        for unit, (t, clock) in sorted(starting.items()):
            if unit not in units:
                fail(f"{unit}: the journal says it started at {t / 1000:.3f} ms, the table does not have it")
                continue
            start, _ = units[unit]
            if not start - clock <= t <= start + SLACK_US:
                fail(f"{unit}: starts at {start / 1000:.3f} ms in the table, at {t / 1000:.3f} ms in the journal")
            checked += 1
        for unit, (t, clock) in sorted(done.items()):
            if unit not in units:
                fail(f"{unit}: the journal says it finished starting at {t / 1000:.3f} ms, the table does not have it")
                continue
            start, end = units[unit]
            if end is None or not start <= end <= t + clock or t > end + SLACK_US:
                fail(f"{unit}: ends at {end} us in the table, at {t} us in the journal")
            checked += 1
        print(f"timeline: {len(starting)} starts and {len(done)} completions of the initrd's journal checked "
              f"({from_kmsg} from the kernel log)", file=sys.stderr)
        if len(starting) < 10 or len(done) < 10:
            fail(f"only {len(starting)} starts and {len(done)} completions in the initrd's journal: too few to check")

        # Ordering: PID 1's After= in the initrd.
        after, unit = {}, None
        for line in (field(record, "FOYER_TIMELINE_UNITS") or "").splitlines():
            if line.startswith("Id="):
                unit = line[3:]
            elif line.startswith("After=") and unit:
                after[unit] = line[6:].split()
        if len(after) < 10:
            fail(f"FOYER_TIMELINE_UNITS has After= of {len(after)} units only")
        pairs = 0
        for a, deps in after.items():
            if a not in units:
                continue
            for b in deps:
                if b not in units or units[b][1] is None:
                    continue
                # b's start job was running when a's started: a must have waited for it.
                if units[b][0] <= units[a][0]:
                    pairs += 1
                    if units[a][0] < units[b][1]:
                        fail(f"{a} started at {units[a][0] / 1000:.3f} ms, before {b} (After=) finished at "
                             f"{units[b][1] / 1000:.3f} ms")
        print(f"timeline: {pairs} After= pairs checked", file=sys.stderr)
        if pairs < 20:
            fail(f"only {pairs} After= pairs to check")

        # The CLI: the table round-trips, and the chart's bars are the table's rows.
        path = os.path.join(tmp, "timeline.tsv")
        with open(path, "w") as f:
            f.write(table_text)
        out = subprocess.run([foyer, "timeline", path], check=True, capture_output=True, text=True).stdout
        if out != table_text:
            fail("foyer timeline does not print the recorded table unchanged")
        svg = subprocess.run([foyer, "timeline", "--svg", path], check=True, capture_output=True, text=True).stdout
        check_svg(svg, rows)


def check_svg(svg, rows):
    ns = "{http://www.w3.org/2000/svg}"
    root = ET.fromstring(svg)
    px_per_s, left = float(root.get("data-px-per-s")), float(root.get("data-left"))
    bars = [r for r in root.iter(ns + "rect") if r.get("data-kind")]
    if len(bars) != len(rows):
        fail(f"the SVG has {len(bars)} bars, the table {len(rows)} rows")
        return
    for bar, (kind, name, start, end) in zip(bars, rows):
        got = (bar.get("data-kind"), bar.get("data-name"), parse_ms(bar.get("data-start-ms")),
               parse_ms(bar.get("data-end-ms")))
        if got != (kind, name, start, end):
            fail(f"SVG bar {got} is not the table's row {(kind, name, start, end)}")
            continue
        x, w = float(bar.get("x")), float(bar.get("width"))
        want_x = left + start * px_per_s / 1e6
        want_w = max((end - start) * px_per_s / 1e6 if end is not None else 0, 2.0)
        if abs(x - want_x) > 0.002 or abs(w - want_w) > 0.002:
            fail(f"SVG bar of {kind} {name}: x={x} width={w}, the table says x={want_x:.3f} width={want_w:.3f}")
    print(f"timeline: {len(bars)} SVG bars match the table", file=sys.stderr)


main()
sys.exit(1 if failures else 0)
