package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/pb33f/libopenapi"
	"go.yaml.in/yaml/v3"
)

func hwm() string {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM") {
			return l
		}
	}
	return ""
}

func main() {
	data, err := os.ReadFile(os.Args[2])
	if err != nil {
		panic(err)
	}
	t := time.Now()
	switch os.Args[1] {
	case "lib":
		doc, err := libopenapi.NewDocument(data)
		if err != nil {
			panic(err)
		}
		t1 := time.Since(t)
		m, err := doc.BuildV3Model()
		if err != nil {
			fmt.Println("err", err)
		}
		n := 0
		for p := m.Model.Paths.PathItems.First(); p != nil; p = p.Next() {
			n += p.Value().GetOperations().Len()
		}
		fmt.Println("ops", n, "newdoc", t1)
	case "yaml":
		var n yaml.Node
		if err := yaml.Unmarshal(data, &n); err != nil {
			panic(err)
		}
	case "json":
		var v any
		json.Unmarshal(data, &v)
	}
	fmt.Println(os.Args[1], time.Since(t), hwm())
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Println("totalalloc MB", ms.TotalAlloc>>20, "mallocs", ms.Mallocs)
}
