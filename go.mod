module github.com/lockcheck/lockcheck

go 1.26.8
