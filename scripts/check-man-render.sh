#!/bin/sh
# Render each man page with mandoc -Tutf8 and fail on quotes that do not
# pair up: an opening " while one is open, a closing " with none open,
# one left open at the end of a section, or two closing quotes in a row.
# These come from nested .Dq/.Sq (".Pq Dq a , Dq b" renders
# (“a, “b””)): mandoc -Tlint does not see them.
#   scripts/check-man-render.sh man/*.1 man/*.5
set -eu

status=0
for page in "$@"; do
	# Plain text (no overstrike), one stream; awk works on bytes, so the
	# quotes are matched as their UTF-8 sequences.
	if ! mandoc -Tutf8 "$page" | sed 's/.\x08//g' |
	    awk -v page="$page" '
		BEGIN { lq = "\342\200\234"; rq = "\342\200\235"; open = 0; bad = 0 }
		function report(what) {
			printf "%s:%d: %s: %s\n", page, NR, what, $0
			bad = 1
		}
		/^[A-Z][A-Z ]*$/ {
			if (open) report("quote left open before section")
			open = 0
		}
		{
			if (index($0, rq rq) || index($0, lq lq))
				report("doubled quote")
			s = $0
			while (1) {
				i = index(s, lq); j = index(s, rq)
				if (i == 0 && j == 0) break
				if (i != 0 && (j == 0 || i < j)) {
					if (open) report("quote opened inside a quote")
					open = 1
					s = substr(s, i + 3)
				} else {
					if (!open) report("closing quote without opening")
					open = 0
					s = substr(s, j + 3)
				}
			}
		}
		END { if (open) report("quote left open at the end"); exit bad }'
	then
		status=1
	fi
done
exit $status
