package checker

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/history"
)

// TestRegisterDescriptionsTokens checks that the register model's
// operation descriptions (the boxes of linearizability.html) print a
// ZooKeeper zxid as epoch:counter, as the stories do, and other tokens as
// numbers.
func TestRegisterDescriptionsTokens(t *testing.T) {
	m := registerModel()
	const zxid = 1<<32 | 797
	for _, tc := range []struct {
		in   *csOp
		want string
	}{
		{&csOp{kind: rRMW, proc: 3, read: 1, wrote: 2, token: zxid, zxid: true}, "3 cs 1→2 (zxid 1:797)"},
		{&csOp{kind: rIncr, proc: 3, token: zxid, zxid: true}, "3 cs +1 (zxid 1:797)"},
		{&csOp{kind: rMaybe, proc: 3, read: 1, wrote: 2, token: zxid, zxid: true}, "3 cs 1→2 (info) (zxid 1:797)"},
		{&csOp{kind: rCredit, proc: 3, token: zxid, zxid: true}, "3 cs +1 (info) (zxid 1:797)"},
		{&csOp{kind: rRMW, proc: 3, read: 1, wrote: 2, token: zxid}, "3 cs 1→2 (token 4294968093)"},
		{&csOp{kind: rRMW, proc: 3, read: 1, wrote: 2, zxid: true}, "3 cs 1→2"},
	} {
		if got := m.DescribeOperation(tc.in, nil); got != tc.want {
			t.Errorf("DescribeOperation = %q, want %q", got, tc.want)
		}
	}
}

// TestRegisterPageZxids checks that a resource check with ZooKeeper tokens
// draws them as epoch:counter in linearizability.html.
func TestRegisterPageZxids(t *testing.T) {
	h, err := history.ReadFile(filepath.Join("testdata", "histories", "fenced-pause-accepted", "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	page := visualizedPage(t, NewResource(Options{Tokens: ZxidTokens}).Check(context.Background(), h))
	for _, want := range []string{`(zxid 0:`, `found none that fits a register that each critical section read and then wrote`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(page, "(token ") {
		t.Error("the page prints a zxid as a plain token")
	}
}
