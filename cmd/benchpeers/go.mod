module github.com/inferlab/inferlab/cmd/benchpeers

go 1.26

require github.com/inferlab/inferlab v0.0.0

replace github.com/inferlab/inferlab => ../..
