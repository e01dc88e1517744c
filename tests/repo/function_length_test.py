#!/usr/bin/env python3
"""Tests of function_length.py's scanner on small crafted sources, so the check itself can fail:
what is a function, where it starts and ends, and when a long one is let through.
Usage: function_length_test.py (run by CTest as repo_function_length_scanner)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import function_length as fl  # noqa: E402


def spans(src):
    return [(name, first, last) for name, first, last in fl.functions(src)]


def body(n):
    """n statement lines."""
    return ''.join(f'  x += {i};\n' for i in range(n))


class WhatIsAFunction(unittest.TestCase):
    def test_free_function_spans_signature_to_closing_brace(self):
        src = 'int f(int a,\n      int b) {\n  return a + b;\n}\n'
        self.assertEqual(spans(src), [('f', 1, 4)])

    def test_namespaces_classes_structs_enums_are_not_functions(self):
        src = ('namespace hb::model {\nnamespace {\nstruct S {\n  int a;\n  int get() const { return a; }\n};\n'
               'enum class K : int { a, b };\nunion U { int i; float f; };\n'
               'template <typename T, typename = void>\nclass C final : public Base<T> {\n'
               ' public:\n  explicit C(int x) : x_(x) {}\n  C& operator=(const C&) { return *this; }\n'
               '  bool operator==(const C& o) const noexcept { return x_ == o.x_; }\n  int x_;\n};\n'
               '}  // namespace\n}\nextern "C" {\nvoid c_api(void) {}\n}\n')
        self.assertEqual(spans(src), [('get', 5, 5), ('C', 12, 12), ('operator=', 13, 13),
                                      ('operator==', 14, 14), ('c_api', 20, 20)])

    def test_brace_initializers_are_not_functions(self):
        src = ('const int table[] = {1, 2, {3}};\nstd::vector<int> v{1, 2};\n'
               'struct P { int a{0}; std::string s = {"x"}; };\n'
               'static const std::map<int, int> m = {{1, 2}, {3, 4}};\nint g() {\n  return 0;\n}\n')
        self.assertEqual(spans(src), [('g', 5, 7)])

    def test_constructor_initializer_list_with_braces_is_one_function(self):
        src = 'Foo::Foo(int a)\n    : x_(a),\n      y_{a, 2},\n      z_{} {\n  run();\n}\n'
        self.assertEqual(spans(src), [('Foo::Foo', 1, 6)])

    def test_lambdas_and_blocks_inside_count_with_their_function(self):
        src = ('void outer() {\n  auto f = [&](int i) {\n    if (i) {\n      return;\n    }\n  };\n'
               '  struct Local { int m() { return 1; } };\n  for (;;) {\n  }\n}\nvoid next() {}\n')
        self.assertEqual(spans(src), [('outer', 1, 10), ('next', 11, 11)])

    def test_lambda_bound_at_namespace_scope_is_measured(self):
        src = 'const auto square = [](int v) {\n  return v * v;\n};\n'
        self.assertEqual(spans(src), [('square (lambda)', 1, 3)])

    def test_qualifiers_trailing_return_and_kernels(self):
        src = ('auto f() -> std::vector<int> {\n  return {};\n}\n'
               'void S::g() const noexcept override {\n}\n'
               '__global__ void __launch_bounds__(256) decode_kernel(const float* q) {\n}\n'
               'template <typename T>\nT h(T t) {\n}\n'
               'template <>\n__device__ __forceinline__ void load8<float>(const float* p) {\n}\n')
        self.assertEqual([s[0] for s in spans(src)], ['f', 'S::g', 'decode_kernel', 'h', 'load8'])

    def test_gtest_bodies_are_named_by_suite_and_case(self):
        src = 'TEST(Suite, Case) {\n  EXPECT_TRUE(true);\n}\n'
        self.assertEqual(spans(src), [('TEST(Suite,Case)', 1, 3)])

    def test_braces_in_comments_strings_chars_and_macros_do_not_count(self):
        src = ('// void not_a_function() {\n/* { */\n#define OPEN {\n#define MULTI \\\n  }\n'
               'int f() {\n  const char* s = "}{";\n  char c = \'}\';\n  auto r = R"x(})x";\n'
               '  long big = 1\'000\'000;\n  return s[0] + c;\n}\n')
        self.assertEqual(spans(src), [('f', 6, 12)])

    def test_macro_line_without_semicolon_before_a_function(self):
        src = 'int a;\nvoid f()\n{\n}\n'
        self.assertEqual(spans(src), [('f', 2, 4)])


class WhenTheCheckFails(unittest.TestCase):
    def run_check(self, files, allow=None):
        return fl.check(sorted(files), lambda p: files[p], allow or {})

    def test_over_the_limit_fails_with_place_and_fix(self):
        files = {'model/a.cpp': '\nvoid too_long() {\n' + body(79) + '}\nvoid fits() {\n' + body(78) + '}\n'}
        problems, allowed, _ = self.run_check(files)
        self.assertEqual(len(problems), 1)
        self.assertIn('model/a.cpp:2: too_long is 81 lines (limit 80)', problems[0])
        self.assertIn('split it into named helpers', problems[0])
        self.assertEqual(allowed, [])

    def test_long_marker_lets_a_kernel_through_but_nothing_else(self):
        src = '// The tile loop.\n// long: one pass over the tile keeps q in registers\nvoid k() {\n' + body(90) + '}\n'
        problems, allowed, _ = self.run_check({'kernels/cpu/k.cpp': src, 'core/k.cpp': src})
        self.assertEqual(len(problems), 1)
        self.assertTrue(problems[0].startswith('core/k.cpp:3: k is 92 lines'))
        self.assertEqual(len(allowed), 1)

    def test_long_marker_inside_the_kernel_counts_and_needs_a_reason(self):
        inside = 'void k() {\n  // long: the reason\n' + body(90) + '}\n'
        empty = 'void k() {\n  // long:\n' + body(90) + '}\n'
        detached = '// long: a reason for something else\n\nvoid k() {\n' + body(90) + '}\n'
        problems, _, _ = self.run_check({'kernels/a.cu': inside, 'kernels/b.cu': empty,
                                         'kernels/c.cu': detached})
        self.assertEqual([p.split(':')[0] for p in problems], ['kernels/b.cu', 'kernels/c.cu'])
        self.assertIn('// long: REASON', problems[0])

    def test_allowlist_matches_exact_path_and_name_only(self):
        src = 'void run_command() {\n' + body(90) + '}\n'
        files = {'cli/cmd_run.cpp': src, 'cli/other.cpp': src}
        problems, _, used = self.run_check(files, {('cli/cmd_run.cpp', 'run_command'): 1})
        self.assertEqual(used, {('cli/cmd_run.cpp', 'run_command')})
        self.assertEqual(len(problems), 1)
        self.assertTrue(problems[0].startswith('cli/other.cpp:1: run_command'))


if __name__ == '__main__':
    unittest.main()
