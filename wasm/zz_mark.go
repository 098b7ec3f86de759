package main

import goapp "github.com/maxence-charriere/go-app/v10/pkg/app"

func init() { goapp.Window().Get("performance").Call("mark", "go-main") }
