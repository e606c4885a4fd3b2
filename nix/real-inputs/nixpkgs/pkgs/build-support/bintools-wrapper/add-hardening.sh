# Placeholder for nixpkgs' pkgs/build-support/bintools-wrapper/add-hardening.sh: rust-overlay puts it into a build script; evaluation only needs the path.
