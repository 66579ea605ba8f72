// Owns checking a Java recipe (examples/other-languages/java) where its libraries cannot be fetched:
// the file is compiled against the JDK alone, and the only errors allowed are those naming what it
// imports from JUnit and Testcontainers (a package or class not found). Everything else, a syntax
// error or a misuse of the JDK's HTTP client, fails. Run: java scripts/lib/JavaRecipeCheck.java FILE...
import java.io.File;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

public class JavaRecipeCheck {
  /** The libraries a recipe may use besides the JDK: only their names may be unresolved. */
  static final List<String> EXTERNAL = List.of("org.junit.", "org.testcontainers.");
  static final Set<String> UNRESOLVED = Set.of(
      "compiler.err.doesnt.exist", "compiler.err.static.imp.only.classes.and.interfaces", "compiler.err.cant.resolve",
      "compiler.err.cant.resolve.location", "compiler.err.cant.resolve.location.args");

  public static void main(String[] args) throws Exception {
    int failures = 0;
    for (String path : args) failures += check(new File(path));
    if (failures > 0) System.exit(1);
  }

  static int check(File file) throws Exception {
    Set<String> external = new HashSet<>();
    Matcher imports = Pattern.compile("^import\\s+(static\\s+)?([\\w.]+)\\s*;", Pattern.MULTILINE).matcher(Files.readString(file.toPath()));
    while (imports.find()) {
      String name = imports.group(2);
      if (EXTERNAL.stream().anyMatch(name::startsWith)) {
        external.add(name.substring(name.lastIndexOf('.') + 1));
        external.add(name.substring(0, name.lastIndexOf('.'))); // the package, as "package ... does not exist" names it
      }
    }
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
    File out = Files.createTempDirectory("java-recipe").toFile();
    try (StandardJavaFileManager files = javac.getStandardFileManager(diagnostics, Locale.ROOT, null)) {
      javac.getTask(null, files, diagnostics, List.of("-proc:none", "-Xlint:none", "-d", out.getPath()), null, files.getJavaFileObjects(file)).call();
    }
    List<String> wrong = new ArrayList<>();
    int unresolved = 0;
    for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
      if (d.getKind() != Diagnostic.Kind.ERROR) continue;
      String message = d.getMessage(Locale.ROOT);
      if (UNRESOLVED.contains(d.getCode()) && namesExternal(message, external)) unresolved++;
      else wrong.add(file.getName() + ":" + d.getLineNumber() + ": " + message.replace('\n', ' '));
    }
    wrong.forEach(System.out::println);
    System.out.println(file.getName() + ": " + (wrong.isEmpty() ? "ok" : wrong.size() + " error(s)") + " against the JDK; "
        + unresolved + " reference(s) to JUnit and Testcontainers left unresolved (not fetchable here)");
    return wrong.size();
  }

  /** The message's symbol (or package) is one the file imports from an external library; a static import's own error always is. */
  static boolean namesExternal(String message, Set<String> external) {
    if (message.startsWith("static import only")) return true;
    Matcher symbol = Pattern.compile("(?:symbol:\\s+(?:class|variable|method)\\s+(\\w+))|(?:package ([\\w.]+) does not exist)").matcher(message);
    if (!symbol.find()) return false;
    return external.contains(symbol.group(1) != null ? symbol.group(1) : symbol.group(2));
  }
}
