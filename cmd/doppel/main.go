// Command doppel checks list-append histories for isolation anomalies, generates
// workloads, and runs them against databases.
package main

import (
	"flag"
	"fmt"
	"os"
	"sort"
)

// Exit codes of doppel check (and of usage errors everywhere).
const (
	exitValid   = 0
	exitInvalid = 1
	exitUnknown = 2
	exitUsage   = 3
)

// command is one subcommand; each lives in its own file and registers itself in init.
type command struct {
	summary string
	run     func(args []string) int
}

var commands = map[string]command{}

func main() {
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help" {
		usage()
		if len(os.Args) < 2 {
			os.Exit(exitUsage)
		}
		return
	}
	c, ok := commands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "doppel: unknown command %q\n", os.Args[1])
		usage()
		os.Exit(exitUsage)
	}
	os.Exit(c.run(os.Args[2:]))
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: doppel COMMAND [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-8s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(os.Stderr, "\nrun 'doppel COMMAND -h' for a command's flags")
}

// parseFlags parses fs's flags wherever they stand among args, so that
// `doppel check FILE --model M` means what it says (Go's flag package stops at
// the first argument that is not a flag, and the rest would be taken as files).
// "--" ends the flags; "-" alone is an argument (standard input).
func parseFlags(fs *flag.FlagSet, args []string) error {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		rest := fs.Args()
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			positional = append(positional, rest...)
			break
		}
		if len(rest) == 0 {
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	return fs.Parse(append([]string{"--"}, positional...))
}
