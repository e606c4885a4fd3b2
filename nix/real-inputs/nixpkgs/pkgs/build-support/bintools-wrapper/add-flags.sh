# Placeholder for nixpkgs' pkgs/build-support/bintools-wrapper/add-flags.sh: rust-overlay puts it into a build script; evaluation only needs the path.
