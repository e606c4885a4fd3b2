# Placeholder for nixpkgs' pkgs/build-support/wrapper-common/utils.bash: rust-overlay puts it into a build script; evaluation only needs the path.
