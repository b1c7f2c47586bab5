"""Checks a gxc Chrome trace the way a trace viewer reads it, with the standard library only.

Usage: check_trace.py TRACE.json COMMAND...
  lanes                 print "PROCESS / LANE" for every lane that has spans
  spans                 print "PROCESS / LANE: NAME" for every span, in start order
  concurrent            print the pairs of spans on different lanes that overlap in time
  when FIRST SECOND     where the span named FIRST starts, against the span named SECOND
                        (names up to " = "): "before" its start, "after" its end, or "during"
The file must be a JSON object with a traceEvents list of well-formed events.
"""
import json
import sys

trace = json.load(open(sys.argv[1]))
events = trace["traceEvents"]
processes, lanes, spans = {}, {}, []
for event in events:
    assert "ph" in event and "pid" in event, f"malformed event {event}"
    if event["ph"] == "M" and event["name"] == "process_name":
        processes[event["pid"]] = event["args"]["name"]
    elif event["ph"] == "M" and event["name"] == "thread_name":
        lanes[(event["pid"], event["tid"])] = event["args"]["name"]
    elif event["ph"] == "X":
        assert event["dur"] >= 0 and event["ts"] >= 0, f"bad span {event}"
        spans.append(event)
spans.sort(key=lambda e: (e["ts"], e["pid"], e["tid"]))


def where(span):
    return f"{processes[span['pid']]} / {lanes[(span['pid'], span['tid'])]}"


command = sys.argv[2]
if command == "lanes":
    for lane in sorted({where(s) for s in spans}):
        print(lane)
elif command == "spans":
    for span in spans:
        print(f"{where(span)}: {span['name']}")
elif command == "concurrent":
    for i, a in enumerate(spans):
        for b in spans[i + 1:]:
            if where(a) != where(b) and b["ts"] < a["ts"] + a["dur"] and a["ts"] < b["ts"] + b["dur"]:
                print(f"{a['name']} ({where(a)}) || {b['name']} ({where(b)})")
elif command == "when":
    def named(name):
        found = [s for s in spans if s["name"].split(" = ")[0] == name]
        assert len(found) == 1, f"{len(found)} spans named {name}"
        return found[0]
    first, second = named(sys.argv[3]), named(sys.argv[4])
    if first["ts"] < second["ts"]:
        print(f"{sys.argv[3]} starts before {sys.argv[4]}")
    elif first["ts"] >= second["ts"] + second["dur"]:
        print(f"{sys.argv[3]} starts after {sys.argv[4]}")
    else:
        print(f"{sys.argv[3]} starts during {sys.argv[4]}")
else:
    sys.exit(f"unknown command {command}")
