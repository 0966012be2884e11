package checker

// The nemesis kinds declare their exercise rules with their records; the
// checker's tests judge histories of every built-in kind, so they link the
// kinds in.
import _ "github.com/lockcheck/lockcheck/nemesis"
