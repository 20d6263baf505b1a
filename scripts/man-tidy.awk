# Turns the DESCRIPTION text swift-argument-parser's generate-manual copies from `--help` into mdoc
# that renders as `--help` reads: a blank line starts a paragraph (.Pp), lines indented by two spaces
# (examples, lists of routes or options) keep their lines in an indented literal block, a text line that
# starts with a control character (' or .) is escaped so that it is printed, and docs/NAME names the
# installed copy of that document under `docdir`. Macro lines pass through unchanged.
#
# Usage: awk -v docdir=/usr/local/share/doc/coffer -f scripts/man-tidy.awk page.1 > tidy.1

function escaped(line) {
    if (line ~ /^['.]/) return "\\&" line
    return line
}

function close_literal() {
    if (literal) { print ".Ed"; literal = 0 }
}

BEGIN { literal = 0; paragraph = 0 }

{
    if (docdir != "") gsub(/docs\//, docdir "/")
}

# generate-manual's own lines: macros (and its comment line).
/^\.[A-Z\\][a-zA-Z\\"]/ {
    close_literal()
    paragraph = ($0 ~ /^\.(Pp|Sh|Ss)/)
    print
    next
}

/^$/ {
    close_literal()
    if (!paragraph) { print ".Pp"; paragraph = 1 }
    next
}

/^  / {
    if (!literal) { print ".Bd -literal -offset indent"; literal = 1 }
    print escaped(substr($0, 3))
    paragraph = 0
    next
}

{
    close_literal()
    print escaped($0)
    paragraph = 0
}

END { close_literal() }
