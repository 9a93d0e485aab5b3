# bash completion for fclabel(1).
# `make install` puts it in $(DATADIR)/bash-completion/completions/fclabel, where
# bash-completion loads it on demand; without bash-completion: . completions/fclabel.bash
# Needs nothing but bash (no bash-completion helpers).
#
# The option lists are those of each command's --help; tests/t_install.sh checks that they match
# (options, and which of them take an argument).

_fclabel_commands="label check relabel dump diff lookup explain"

_fclabel_opts_label="-S --file-contexts --android-root --partition -a --mount-point -n --dry-run -e --exclude -v --verbose
	--json --strict --force --base-only -z --undo -o --output --no-sync --atomic --in-place --no-crash-safety --policy --cross-mounts
	--seapp --packages --digests --as-device --ignore-digests --full-label --data-data-ignore --lock -T --threads --force-mount-point --part
	-h --help"
_fclabel_args_label="-S --file-contexts --android-root --partition -a --mount-point --part -e --exclude --json -z --undo
	-o --output --policy --seapp --packages -T --threads"

_fclabel_opts_check="-S --file-contexts --android-root --partition -a --mount-point -e --exclude --json --base-only --policy
	--cross-mounts -v --verbose --seapp --packages --digests --as-device --ignore-digests --data-data-ignore --lock
	-T --threads --force-mount-point --part -h --help"
_fclabel_args_check="-S --file-contexts --android-root --partition -a --mount-point --part -e --exclude --json --policy --seapp
	--packages -T --threads"

_fclabel_opts_relabel="--from --to --android-root --partition -a --mount-point -e --exclude -v --verbose -n --dry-run --plan --verify
	--json --force --base-only -z --undo -o --output --no-sync --atomic --in-place --no-crash-safety --policy --cross-mounts
	--seapp --from-seapp --packages --digests --full-label --data-data-ignore --lock --force-mount-point --part -h --help"
_fclabel_args_relabel="--from --to --android-root --partition -a --mount-point --part -e --exclude --json -z --undo -o --output
	--policy --seapp --from-seapp --packages"

_fclabel_opts_dump="-a --mount-point --force-mount-point --json --format --cross-mounts -T --threads --lock --part -h --help"
_fclabel_args_dump="-a --mount-point --format -T --threads --part"

_fclabel_opts_diff="--android-root --partition --old-root --old-partition --json --base-only -h --help"
_fclabel_args_diff="--android-root --partition --old-root --old-partition"

_fclabel_opts_lookup="-S --file-contexts --android-root --partition --base-only -m --mode -v --verbose --batch -0 --null
	--policy --seapp --packages -h --help"
_fclabel_args_lookup="-S --file-contexts --android-root --partition -m --mode --policy --seapp --packages"

_fclabel_opts_explain="-S --file-contexts --android-root --partition -v --verbose --base-only -m
	--mode --seapp --packages -h --help"
_fclabel_args_explain="-S --file-contexts --android-root --partition -m --mode --seapp --packages"

# _fclabel_files WORD LIST: file names for WORD; with LIST=1, WORD is a comma-separated list
# and only its last element is completed.
_fclabel_files()
{
	local word=$1 pre=""
	if [[ $2 == 1 && $word == *,* ]]; then
		pre=${word%,*},
		word=${word##*,}
	fi
	compopt -o filenames 2>/dev/null
	mapfile -t COMPREPLY < <(compgen -f -- "$word")
	if [[ -n $pre ]]; then
		COMPREPLY=("${COMPREPLY[@]/#/$pre}")
	fi
}

_fclabel()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev="" opt="" eq="" cmd w
	((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
	COMPREPLY=()

	if ((COMP_CWORD == 1)); then
		COMPREPLY=($(compgen -W "$_fclabel_commands --help --version" -- "$cur"))
		return 0
	fi
	cmd=${COMP_WORDS[1]}
	case " $_fclabel_commands " in
	*" $cmd "*) ;;
	*) return 0 ;;
	esac
	local opts_var=_fclabel_opts_$cmd args_var=_fclabel_args_$cmd
	local opts=${!opts_var} args=${!args_var}

	# the option whose argument is being completed: "-S x", "--json x", "--json=x"
	# (bash splits "--json=x" into "--json" "=" "x")
	if [[ $cur == = && $prev == --* ]]; then
		opt=$prev eq="=" cur=""
	elif [[ $prev == = ]] && ((COMP_CWORD >= 3)); then
		opt=${COMP_WORDS[COMP_CWORD - 2]}
	elif [[ $prev == -* ]]; then
		opt=$prev
	fi
	# --lock and --data-data-ignore take their value only as --OPTION=VALUE
	local vals="yes no nonblock"
	[[ $opt == --data-data-ignore ]] && vals="yes no"
	if [[ ($opt == --lock || $opt == --data-data-ignore) && -n $eq ]]; then
		COMPREPLY=($(compgen -W "$vals" -- "$cur"))
		COMPREPLY=("${COMPREPLY[@]/#/=}")
		return 0
	elif [[ $prev == = && ($opt == --lock || $opt == --data-data-ignore) ]]; then
		COMPREPLY=($(compgen -W "$vals" -- "$cur"))
		return 0
	fi
	if [[ -n $opt ]]; then
		for w in $args; do
			[[ $w == "$opt" ]] || continue
			case $opt in
			-S | --file-contexts | --to | --seapp | --from-seapp) _fclabel_files "$cur" 1 ;;
			--from)
				_fclabel_files "$cur" 1
				[[ none == "$cur"* ]] && COMPREPLY+=(none)
				;;
			-m | --mode) COMPREPLY=($(compgen -W "f d l c b p s" -- "$cur")) ;;
			--format) COMPREPLY=($(compgen -W "text json file_contexts" -- "$cur")) ;;
			--android-root | --old-root)
				compopt -o filenames 2>/dev/null
				mapfile -t COMPREPLY < <(compgen -d -- "$cur")
				;;
			# NAME=, then (bash splits at '=') a directory or image, as an operand
			--partition | --old-partition)
				COMPREPLY=($(compgen -W "system= system_ext= product= vendor= odm=" -- "$cur"))
				compopt -o nospace 2>/dev/null
				;;
			# paths inside the image: nothing on this machine to complete
			-a | --mount-point | -e | --exclude) ;;
			*) _fclabel_files "$cur" 0 ;; # --json, --policy, -z/--undo, -o/--output, --packages
			esac
			[[ -n $eq ]] && COMPREPLY=("${COMPREPLY[@]/#/=}")
			return 0
		done
	fi
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		return 0
	fi
	# operands: IMAGE or DIR (label, check, relabel, dump), OLD_FC NEW_FC (diff), PATH (lookup, explain)
	case $cmd in
	diff) _fclabel_files "$cur" 1 ;;
	*) _fclabel_files "$cur" 0 ;;
	esac
	return 0
}

complete -F _fclabel fclabel fclabel-static
