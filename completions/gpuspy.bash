# bash completion for gpuspy(1).  The options of each command are those of
# 'gpuspy COMMAND --help' (tests/cli/test_help_man.py checks that they agree).

_gpuspy()
{
	local cur prev cmd i
	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}

	# the command: the first word after 'gpuspy' that is not an option
	cmd=
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-*) ;;
		*) cmd=${COMP_WORDS[i]}; break ;;
		esac
	done

	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W '--help --version --lib' -- "$cur"))
		else
			COMPREPLY=($(compgen -W 'run report merge snapshot top diff export exporter commits' -- "$cur"))
		fi
		return 0
	fi

	case $cmd in
	run)
		# after the program, every word is the program's own
		local j
		for ((j = i + 1; j < COMP_CWORD; j++)); do
			case ${COMP_WORDS[j]} in
			-o | --output | --prometheus) ((j++)) ;;
			--) ((j++)); break ;;
			-*) ;;
			*) break ;;
			esac
		done
		if ((j < COMP_CWORD)); then
			COMPREPLY=($(compgen -f -- "$cur"))
			return 0
		fi
		case $prev in
		-o | --output)
			COMPREPLY=($(compgen -d -- "$cur"))
			return 0
			;;
		--prometheus)
			COMPREPLY=()
			return 0
			;;
		esac
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W '--output --prometheus --help' -- "$cur"))
		else
			COMPREPLY=($(compgen -c -- "$cur"))
		fi
		return 0
		;;
	report | merge)
		case $prev in
		-f | --format)
			if [[ $cmd == report ]]; then
				COMPREPLY=($(compgen -W 'text json csv pprof perfetto collapsed html' -- "$cur"))
			else
				COMPREPLY=($(compgen -W 'text json' -- "$cur"))
			fi
			return 0
			;;
		-n | --top | --at | --fail-on-leak) return 0 ;;
		--junit)
			COMPREPLY=($(compgen -f -- "$cur"))
			return 0
			;;
		-s | --sections)
			COMPREPLY=($(compgen -W 'summary oom wrong-device growth torch processes leaks pinned peak allocations sites totals next' -- "${cur##*,}"))
			return 0
			;;
		esac
		if [[ $cur == -* ]]; then
			if [[ $cmd == report ]]; then
				COMPREPLY=($(compgen -W '--format --at --peak --top --sections --fail-on-leak --include-pools --junit --strict --help' -- "$cur"))
			else
				COMPREPLY=($(compgen -W '--format --top --strict --help' -- "$cur"))
			fi
			return 0
		fi
		;;
	snapshot)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W '--help' -- "$cur"))
		elif ((COMP_CWORD == i + 1)); then
			COMPREPLY=($(compgen -W "$(ps -eo pid= 2>/dev/null)" -- "$cur"))
		fi
		return 0
		;;
	top)
		case $prev in
		-i | --interval | -n | --top | -c | --count) return 0 ;;
		esac
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W '--interval --top --count --help' -- "$cur"))
			return 0
		fi
		;;
	exporter)
		case $prev in
		-l | --listen) return 0 ;;
		esac
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W '--listen --help' -- "$cur"))
			return 0
		fi
		COMPREPLY=($(compgen -d -- "$cur"))
		return 0
		;;
	diff)
		case $prev in
		-f | --format)
			COMPREPLY=($(compgen -W 'text json' -- "$cur"))
			return 0
			;;
		--fail-on-growth | -t | --threshold | -a | --at | -n | --top) return 0 ;;
		--budget | --junit)
			COMPREPLY=($(compgen -f -- "$cur"))
			return 0
			;;
		esac
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W '--format --fail-on-growth --budget --junit --threshold --at
				--top --old --new --strict --help' -- "$cur"))
			return 0
		fi
		;;
	commits)
		case $prev in
		-f | --format)
			COMPREPLY=($(compgen -W 'text csv html' -- "$cur"))
			return 0
			;;
		-o | --order)
			COMPREPLY=($(compgen -W 'given time commit' -- "$cur"))
			return 0
			;;
		-n | --top) return 0 ;;
		esac
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W '--format --order --top --strict --help' -- "$cur"))
			return 0
		fi
		;;
	export)
		case $prev in
		--tensorboard)
			COMPREPLY=($(compgen -d -- "$cur"))
			return 0
			;;
		--memory-viz)
			COMPREPLY=($(compgen -f -- "$cur"))
			return 0
			;;
		--step)
			COMPREPLY=($(compgen -W 'time mark' -- "$cur"))
			return 0
			;;
		-n | --top) return 0 ;;
		esac
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W '--tensorboard --memory-viz --step --top --strict --help' -- "$cur"))
			return 0
		fi
		;;
	*)
		return 0
		;;
	esac
	# run directories, process directories and report files
	COMPREPLY=($(compgen -f -- "$cur"))
	return 0
}
complete -o filenames -F _gpuspy gpuspy
