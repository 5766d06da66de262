//! What a file holds of JavaScript or TypeScript, for the module paths in it: a script file
//! whole, or a Vue or Svelte component's `<script>` blocks (`lang="ts"` is TypeScript, `"tsx"`
//! TSX, anything else JavaScript), each parsed on its own and its specifiers placed at their line
//! and column in the component.
//!
//! Invariant: a block is the text between a `<script …>` tag's `>` and the next `</script>`; a
//! component whose tag is not closed gives no block past it (nothing is judged on a guess).

use super::Specifier;
use crate::syntax::Language;
use crate::syntax::{languages, trees};

/// Whether `rel` is a Vue or Svelte component, whose `<script>` blocks are scripts.
pub(crate) fn is_component(rel: &str) -> bool {
    rel.ends_with(".vue") || rel.ends_with(".svelte")
}

/// How a file holds scripts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Scripts {
    /// The file is a script in this language.
    File(Language),
    /// A Vue or Svelte component: its `<script>` blocks.
    Blocks,
}

impl Scripts {
    pub(super) fn of(rel: &str) -> Option<Scripts> {
        match Language::from_path(rel) {
            Some(l @ (Language::JavaScript | Language::TypeScript | Language::Tsx)) => {
                Some(Scripts::File(l))
            }
            _ if is_component(rel) => Some(Scripts::Blocks),
            _ => None,
        }
    }

    /// The specifiers `pick` finds in `text`, at their places in it. For a script file, `before`
    /// (the text it was edited from) takes its tree from the cache the syntax gate fills;
    /// `None`: parsed apart, uncached (a file read only to be searched).
    pub(super) fn specifiers(
        self,
        text: &str,
        before: Option<Option<&str>>,
        pick: &dyn Fn(Language, &str, &tree_sitter::Tree) -> Vec<Specifier>,
    ) -> Vec<Specifier> {
        match self {
            Scripts::File(lang) => {
                let tree = match before {
                    Some(b) => trees::tree(lang, text, b),
                    None => languages::parse(lang, text),
                };
                tree.map(|t| pick(lang, text, &t)).unwrap_or_default()
            }
            Scripts::Blocks => blocks(text)
                .into_iter()
                .flat_map(|b| {
                    let mut specs = languages::parse(b.lang, b.body)
                        .map(|t| pick(b.lang, b.body, &t))
                        .unwrap_or_default();
                    for s in &mut specs {
                        if s.line == 1 {
                            s.column += b.column;
                        }
                        s.line += b.line;
                    }
                    specs
                })
                .collect(),
        }
    }
}

/// One `<script>` block: its language, its text, and how many lines and (on its first line)
/// characters of the component come before it.
struct Block<'t> {
    lang: Language,
    body: &'t str,
    line: usize,
    column: usize,
}

fn blocks(text: &str) -> Vec<Block<'_>> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(open) = text[at..].find("<script").map(|n| at + n) {
        let Some(tag_end) = text[open..].find('>').map(|n| open + n) else {
            break;
        };
        let start = tag_end + 1;
        let Some(end) = text[start..].find("</script>").map(|n| start + n) else {
            break;
        };
        let attrs = &text[open + "<script".len()..tag_end];
        let lang = match attr(attrs, "lang") {
            Some("ts" | "typescript") => Language::TypeScript,
            Some("tsx") => Language::Tsx,
            _ => Language::JavaScript,
        };
        let before = &text[..start];
        let line_start = before.rfind('\n').map_or(0, |n| n + 1);
        out.push(Block {
            lang,
            body: &text[start..end],
            line: before.matches('\n').count(),
            column: before[line_start..].chars().count(),
        });
        at = end + "</script>".len();
    }
    out
}

/// The value of attribute `name` in a tag's attribute text (quoted either way).
fn attr<'a>(attrs: &'a str, name: &str) -> Option<&'a str> {
    let mut rest = attrs;
    while let Some(n) = rest.find(name) {
        let after = rest[n + name.len()..].trim_start();
        let boundary = n == 0 || rest.as_bytes()[n - 1].is_ascii_whitespace();
        if boundary && let Some(v) = after.strip_prefix('=') {
            let v = v.trim_start();
            let q = v.chars().next().filter(|c| *c == '"' || *c == '\'')?;
            return v[1..].split(q).next();
        }
        rest = &rest[n + name.len()..];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::imports;

    fn specs(rel: &str, text: &str) -> Vec<(String, usize, usize)> {
        Scripts::of(rel)
            .expect("scripts")
            .specifiers(text, None, &|l, t, tree| {
                imports::relative_specifiers(l, t, tree)
            })
            .into_iter()
            .map(|s| (s.text, s.line, s.column))
            .collect()
    }

    #[test]
    fn a_components_script_blocks_are_read_at_their_places() {
        let vue = "<template>\n  <p>{{ x }}</p>\n</template>\n\n<script setup lang=\"ts\">\nimport { x } from './x'\nconst n: number = 1\n</script>\n<script>import a from '../a.js'</script>\n";
        assert_eq!(
            specs("src/App.vue", vue),
            vec![("./x".into(), 6, 19), ("../a.js".into(), 9, 23)]
        );
        let svelte =
            "<script lang='ts'>\n  import Row from './Row.svelte';\n</script>\n<h1>hi</h1>\n";
        assert_eq!(
            specs("src/List.svelte", svelte),
            vec![("./Row.svelte".into(), 2, 19)]
        );
        // Not closed: nothing judged.
        assert!(specs("src/B.vue", "<script>\nimport a from './a'\n").is_empty());
        assert_eq!(
            Scripts::of("a.ts"),
            Some(Scripts::File(Language::TypeScript))
        );
        assert_eq!(Scripts::of("a.css"), None);
    }

    /// A component is the user's: any text gives its blocks without a panic.
    #[test]
    fn any_component_text_is_read_without_a_panic() {
        const PIECES: [&str; 10] = [
            "<script",
            ">",
            "</script>",
            " lang=",
            "\"ts\"",
            "'",
            "import a from './a'",
            "\n",
            "é",
            "<",
        ];
        for text in crate::testgen::pieced(&PIECES, 20_000, 16) {
            for s in specs("src/C.vue", &text) {
                assert!(s.1 >= 1 && s.2 >= 1, "{s:?} in {text:?}");
            }
        }
    }

    #[test]
    fn attributes_are_read_whole() {
        assert_eq!(attr(" setup lang=\"ts\"", "lang"), Some("ts"));
        assert_eq!(attr(" xlang=\"ts\" lang = 'tsx'", "lang"), Some("tsx"));
        assert_eq!(attr(" setup", "lang"), None);
    }
}
