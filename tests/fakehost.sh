# The forced command of one simulated host of tests/fleet.py, as authorized_keys names it:
#     command="/bin/sh tests/fakehost.sh <host> <fleet dir> <python>"
# Hand-written POSIX sh (dash on Debian), not Python: a Python start per command cost more CPU than the exporter
# that bench/fleet.py measures (300 hosts at a 60 s cadence saturated 2 cores); this costs a dash and a cat.
#
# The same rules as tests/fakehost.py, whose docstring they are: sshd puts the client's command line in
# SSH_ORIGINAL_COMMAND, and nothing of it is ever executed, evaluated or expanded.  The line may hold only the
# token characters [A-Za-z0-9_.,:=+-] and spaces (so no quote, $, `, ;, |, &, newline, glob or path gets past
# the first case); it is cut into words with quoted parameter expansions only; the first word must be a tool of
# the host's platform (a lower-case name with a file in <fleet dir>/platforms/<platform>/), every word at most 64
# characters.  Anything else: exit 127, nothing on stdout.  (Stricter than fakehost.py's shlex on two points no
# client sends: quotes around a plain word and tabs between words; the exporter's remote.shell_word leaves a
# plain word unquoted and ssh joins the words with spaces.)
#
# The host's state is read at every call from <fleet dir>/hosts/<host>.state ("<platform> <behaviour> <delay>",
# replaced by a rename): a healthy host prints the capture at once (exec cat); a slow or hung one is left to
# tests/fakehost.py (<python> -I -S), which sleeps, or waits for the client to go, as sh cannot.
set -f  # no pathname expansion anywhere (nothing below expands unquoted; a second lock)
host=$1
fleet=$2
python=$3
line=${SSH_ORIGINAL_COMMAND-}

refuse() {
    printf 'fakehost: %s\n' "$1" >&2
    exit 127
}

# no tool line the exporter sends is near 1,024 characters; a longer one is refused before the pattern work below,
# which takes seconds on 100,000 characters in dash
[ ${#line} -le 1024 ] || refuse "a command line of ${#line} characters: not allowed"
case "$line" in
    *[!ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.,:=+\ -]*)
        refuse "a character outside [A-Za-z0-9_.,:=+-] and space: not allowed" ;;
esac

read -r platform behaviour delay < "$fleet/hosts/$host.state" || exit 1
tools=$fleet/platforms/$platform

tool=
rest=$line
while :; do
    rest=${rest#"${rest%%[! ]*}"}  # the leading spaces off
    [ -n "$rest" ] || break
    word=${rest%% *}
    rest=${rest#"$word"}
    [ ${#word} -le 64 ] || refuse "a word of ${#word} characters: not allowed"
    if [ -z "$tool" ]; then
        case "$word" in
            *[!abcdefghijklmnopqrstuvwxyz]*) refuse "'$word': not allowed" ;;
        esac
        [ -f "$tools/$word" ] || refuse "'$word': not allowed"
        tool=$word
    fi
done
[ -n "$tool" ] || refuse "no interactive login here"

case "$behaviour" in
    healthy) exec cat -- "$tools/$tool" ;;
    *) exec "$python" -I -S "${0%.sh}.py" "$host" "$fleet" ;;
esac
