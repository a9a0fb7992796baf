package workload

import (
	"errors"

	"doppel/check"
	"doppel/history"
)

// checkHistory is check.Check; TEMPORARY stub until package check has Check.
var checkHistory = func(h *history.History, opts check.Options) (check.Result, error) {
	return check.Result{}, errors.New("check.Check is not available yet")
}
