// Owns checking a Go recipe (examples/other-languages/go) where its modules cannot be fetched: the
// file is parsed and type-checked against the standard library, and the only errors allowed are those
// naming what it imports from outside it (testcontainers-go, the Docker API types), left unresolved.
// A syntax error or a misuse of net/http or encoding/json fails. Run: go run ./scripts/lib/go-recipe-check FILE...
package main

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strings"
)

// stdlibOrEmpty imports the standard library, and gives every other path an empty package.
type stdlibOrEmpty struct{ std types.Importer }

func (i stdlibOrEmpty) Import(path string) (*types.Package, error) {
	if !strings.Contains(strings.Split(path, "/")[0], ".") {
		return i.std.Import(path)
	}
	pkg := types.NewPackage(path, packageName(path))
	pkg.MarkComplete()
	return pkg, nil
}

// packageName guesses an outside package's name from its path as Go's convention has it
// (github.com/testcontainers/testcontainers-go is package testcontainers).
func packageName(path string) string {
	name := path[strings.LastIndex(path, "/")+1:]
	name = strings.TrimPrefix(strings.TrimSuffix(name, "-go"), "go-")
	return strings.ReplaceAll(name, "-", "")
}

func main() {
	failed := false
	for _, file := range os.Args[1:] {
		if !check(file) {
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}

func check(path string) bool {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, nil, parser.AllErrors)
	if err != nil {
		fmt.Println(err)
		return false
	}
	external := map[string]bool{} // the names the file gives its outside imports
	for _, spec := range file.Imports {
		importPath := strings.Trim(spec.Path.Value, `"`)
		if !strings.Contains(strings.Split(importPath, "/")[0], ".") {
			continue
		}
		name := packageName(importPath)
		if spec.Name != nil {
			name = spec.Name.Name
		}
		external[name] = true
	}
	var wrong []string
	unresolved := 0
	config := types.Config{
		Importer: stdlibOrEmpty{importer.Default()},
		Error: func(err error) {
			typeErr := err.(types.Error)
			if refersToExternal(file, typeErr.Pos, external) {
				unresolved++
				return
			}
			wrong = append(wrong, typeErr.Error())
		},
	}
	_, _ = config.Check(file.Name.Name, fset, []*ast.File{file}, nil)
	for _, line := range wrong {
		fmt.Println(line)
	}
	status := "ok"
	if len(wrong) > 0 {
		status = fmt.Sprintf("%d error(s)", len(wrong))
	}
	fmt.Printf("%s: %s against the standard library; %d reference(s) to modules not fetchable here left unresolved\n", filepath.Base(path), status, unresolved)
	return len(wrong) == 0
}

// refersToExternal: the error sits on a selector of an outside package (testcontainers.GenericContainer).
func refersToExternal(file *ast.File, pos token.Pos, external map[string]bool) bool {
	found := false
	ast.Inspect(file, func(n ast.Node) bool {
		if found || n == nil || pos < n.Pos() || pos >= n.End() {
			return !found && n != nil && pos >= n.Pos() && pos < n.End()
		}
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && external[id.Name] && pos >= sel.Sel.Pos() && pos < sel.Sel.End() {
				found = true
			}
		}
		return true
	})
	return found
}
