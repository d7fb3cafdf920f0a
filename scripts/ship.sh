#!/bin/sh
# Ships one closed output file of a node (WARC, CDXJ or page log) for --on-file-closed:
#   shardcrawl node ... --on-file-closed /opt/shardcrawl/scripts/ship.sh --delete-shipped
# Exit 0 only once the file is safely at its destination (the node then records it as shipped and,
# with --delete-shipped, removes it); any other exit is retried by the node with back-off.
# Shipping the same file twice is harmless (same name, same bytes).
#
# SHIP_DEST says where:
#   s3://bucket/prefix      object storage through the AWS CLI (aws s3 cp, then a size check)
#   host:/path or rsync://  an archive host through rsync (temp name, then renamed)
#   /local/folder           a folder (tests; an NFS mount): copied to a temp name, fsynced, renamed
# Files land under $SHIP_DEST/$SHIP_NODE/<warc|pages>/<name> (SHIP_NODE defaults to the host name).
set -eu
src=${1:?usage: ship.sh <file>}
dest=${SHIP_DEST:?set SHIP_DEST (s3://bucket/prefix, host:/path or a folder)}
node=${SHIP_NODE:-$(hostname -s 2>/dev/null || hostname)}
[ -f "$src" ] || { echo "ship.sh: no such file: $src" >&2; exit 1; }
kind=$(basename "$(dirname "$src")")
name=$(basename "$src")
size=$(wc -c < "$src" | tr -d ' ')

case "$dest" in
  s3://*)
    key="${dest%/}/$node/$kind/$name"
    aws s3 cp --only-show-errors "$src" "$key"
    bucket=$(printf '%s' "${key#s3://}" | cut -d/ -f1)
    path=$(printf '%s' "${key#s3://}" | cut -d/ -f2-)
    got=$(aws s3api head-object --bucket "$bucket" --key "$path" --query ContentLength --output text)
    [ "$got" = "$size" ] || { echo "ship.sh: $key has $got bytes, expected $size" >&2; exit 1; }
    ;;
  *:*)
    target="${dest%/}/$node/$kind"
    # rsync writes to a temp name and renames; an interrupted transfer waits in .rsync-partial.
    # --mkpath needs rsync >= 3.2.3; older ones need the folder made beforehand.
    rsync -a --partial-dir=.rsync-partial --mkpath "$src" "$target/" 2>/dev/null \
      || rsync -a --partial-dir=.rsync-partial "$src" "$target/"
    ;;
  *)
    target="${dest%/}/$node/$kind"
    mkdir -p "$target"
    tmp="$target/.$name.ship-$$"
    cp "$src" "$tmp"
    sync "$tmp" 2>/dev/null || sync
    got=$(wc -c < "$tmp" | tr -d ' ')
    [ "$got" = "$size" ] || { rm -f "$tmp"; echo "ship.sh: copied $got bytes of $size" >&2; exit 1; }
    mv -f "$tmp" "$target/$name"
    ;;
esac
