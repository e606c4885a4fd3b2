//! Subcommands built only when they run. clap builds the arguments of every subcommand
//! before it parses, ~0.3 ms of a fresh process (its code paged in, its strings allocated):
//! a tenth of a small change's `diff-check` (docs/performance.md, "diff-check's start").
//! [`Lazy`] hands a subcommand's arguments to clap through `Command::defer`, so only the
//! subcommand named on the command line is built; `--help` of any of them builds it as before.

use clap::{ArgMatches, Args, Command, FromArgMatches, Subcommand};
use std::ops::{Deref, DerefMut};

/// `T`'s arguments (or subcommands), added to its command when clap first needs them.
#[derive(Debug, Clone)]
pub struct Lazy<T>(pub T);

impl<T> Deref for Lazy<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for Lazy<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

impl<T: FromArgMatches> FromArgMatches for Lazy<T> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches(matches).map(Lazy)
    }
    fn from_arg_matches_mut(matches: &mut ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches_mut(matches).map(Lazy)
    }
    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches(matches)
    }
    fn update_from_arg_matches_mut(&mut self, matches: &mut ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches_mut(matches)
    }
}

impl<T: Args> Args for Lazy<T> {
    fn augment_args(cmd: Command) -> Command {
        cmd.defer(T::augment_args)
    }
    fn augment_args_for_update(cmd: Command) -> Command {
        cmd.defer(T::augment_args_for_update)
    }
    fn group_id() -> Option<clap::Id> {
        T::group_id()
    }
}

impl<T: Subcommand> Subcommand for Lazy<T> {
    fn augment_subcommands(cmd: Command) -> Command {
        cmd.defer(T::augment_subcommands)
    }
    fn augment_subcommands_for_update(cmd: Command) -> Command {
        cmd.defer(T::augment_subcommands_for_update)
    }
    fn has_subcommand(name: &str) -> bool {
        T::has_subcommand(name)
    }
}
