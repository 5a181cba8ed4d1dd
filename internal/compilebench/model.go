package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/pb33f/libopenapi"
	"github.com/pb33f/libopenapi/datamodel"
)

// libopenapiFlag, as the only flag with a spec path after it, makes this
// program the libopenapi side of a round (buildModel) instead of the
// benchmark; it is not among the flags -h lists.
const libopenapiFlag = "-libopenapi"

// modelReport is what buildModel prints on stdout, one JSON object.
type modelReport struct {
	Format     string `json:"format"`     // libopenapi's SpecFormat: oas2, oas3, oas3_1…
	Operations int    `json:"operations"` // operations in the model's paths
	Errors     int    `json:"errors"`     // errors returned beside the model
}

// buildModel reads spec and builds libopenapi's model of it, as
// compiler/openapi's BenchmarkLibopenapiGitHub does: NewDocument with the
// default configuration, then BuildV3Model (BuildV2Model for Swagger 2.0).
// A model returned with errors (libopenapi returns circular references
// beside a complete model) is a success; no model is a failure (exit 1).
func buildModel(spec string, stdout, stderr io.Writer) int {
	rep, err := model(spec)
	if err != nil {
		fmt.Fprintf(stderr, "libopenapi: %v\n", err)
		return 1
	}
	b, _ := json.Marshal(rep)
	fmt.Fprintf(stdout, "%s\n", b)
	return 0
}

func model(spec string) (modelReport, error) {
	var rep modelReport
	data, err := os.ReadFile(spec)
	if err != nil {
		return rep, err
	}
	doc, err := libopenapi.NewDocument(data)
	if err != nil {
		return rep, err
	}
	rep.Format = doc.GetSpecInfo().SpecFormat
	if rep.Format == datamodel.OAS2 {
		m, err := doc.BuildV2Model()
		if m == nil {
			return rep, fmt.Errorf("no Swagger 2.0 model: %v", err)
		}
		rep.Errors = countErrors(err)
		if m.Model.Paths != nil {
			for _, item := range m.Model.Paths.PathItems.FromOldest() {
				rep.Operations += item.GetOperations().Len()
			}
		}
		return rep, nil
	}
	m, err := doc.BuildV3Model()
	if m == nil {
		return rep, fmt.Errorf("no OpenAPI 3 model: %v", err)
	}
	rep.Errors = countErrors(err)
	if m.Model.Paths != nil {
		for _, item := range m.Model.Paths.PathItems.FromOldest() {
			rep.Operations += item.GetOperations().Len()
		}
	}
	return rep, nil
}

// countErrors counts the errors joined in err.
func countErrors(err error) int {
	if err == nil {
		return 0
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return len(j.Unwrap())
	}
	return 1
}
