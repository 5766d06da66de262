//! Evidence declarations of tools that are not checkers of the table (the checkers declare
//! theirs in their own files, `checks::checker::*::SIGNALS`): mypy, which verify runs.

use super::Signals;

pub const MYPY: Signals = Signals {
    name: "mypy",
    config_files: &["mypy.ini", ".mypy.ini"],
    pyproject_tables: &["tool.mypy"],
    ini_sections: &[("setup.cfg", "mypy")],
    commands: &["mypy"],
    precommit_ids: &["mypy"],
    dependencies: &["mypy"],
    ..Signals::NONE
};
