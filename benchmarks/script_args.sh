# The command line every GPU script of benchmarks/ shares, sourced by them (not run): --estimate-only, -h/--help
# (the script's header comment and its usage line), and its positional arguments counted.
#
#     usage="usage: $0 [--estimate-only] DIR [OUT]"
#     source "$(dirname "$0")/script_args.sh"
#     script_args 1 2 "$@"            # at least 1 and at most 2 positional arguments
#     set -- "${ARGS[@]+"${ARGS[@]}"}"
#
# Sets ESTIMATE_ONLY (0 or 1) and ARGS (the positional arguments). A bad option or count: one line and exit 2.

script_args() {
    local least=$1 most=$2
    shift 2
    ESTIMATE_ONLY=0
    ARGS=()
    local arg
    for arg in "$@"; do
        case $arg in
            -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; echo "$usage"; exit 0 ;;
            --estimate-only) ESTIMATE_ONLY=1 ;;
            -*) echo "$0: error: unknown option $arg; $usage" >&2; exit 2 ;;
            *) ARGS+=("$arg") ;;
        esac
    done
    if [ ${#ARGS[@]} -lt "$least" ] || [ ${#ARGS[@]} -gt "$most" ]; then
        echo "$0: error: $usage" >&2
        exit 2
    fi
}
