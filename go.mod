module doppel

go 1.26
