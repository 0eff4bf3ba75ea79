// See Errors.h. The exception classes live in Python (graphc/errors.py) so
// that they are ordinary, picklable classes with docstrings; this file
// only fills them in.
#include "Errors.h"

#include <string>

#include <nanobind/stl/string.h>

#include "frontend/api/Api.h"

namespace graphc::python {

namespace nb = nanobind;

namespace {

nb::object errorClass(const char* name) { return nb::module_::import_("graphc.errors").attr(name); }

/// errors.Diagnostic(file, line, column, severity, message, notes, text).
nb::object diagnostic(const ir::Diagnostic& d) {
  static const char* severities[] = {"error", "warning", "note"};
  nb::list notes;
  for (const ir::Diagnostic& n : d.notes) notes.append(diagnostic(n));
  const bool known = d.loc.known();
  return errorClass("Diagnostic")(known ? nb::cast(d.loc.buffer->name) : nb::none(), d.loc.line, d.loc.col,
                                  severities[static_cast<int>(d.severity)], d.message, nb::tuple(notes), ir::format(d));
}

void raise(nb::object cls, nb::object value) { PyErr_SetObject(cls.ptr(), value.ptr()); }

}  // namespace

void registerErrorTranslator() {
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const CompileError& e) {
      nb::list diagnostics;
      for (const ir::Diagnostic& d : e.diagnostics) diagnostics.append(diagnostic(d));
      nb::object cls = errorClass("CompileError");
      raise(cls, cls(e.what(), nb::tuple(diagnostics)));
    } catch (const ir::LocatedError& e) {
      ir::Diagnostic d{ir::Severity::Error, e.loc, e.what(), {}};
      nb::object cls = errorClass("CompileError");
      raise(cls, cls(ir::format(d), nb::make_tuple(diagnostic(d))));
    } catch (const runtime::Cancelled& e) {
      nb::object cls = errorClass("Cancelled");
      raise(cls, cls(e.what()));
    } catch (const ir::Error& e) {
      nb::object cls = errorClass("Error");
      raise(cls, cls(e.what()));
    }
  });
}

}  // namespace graphc::python
