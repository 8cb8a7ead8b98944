"""Record: results written once to the database, then mirrored as files; packets and ground truth."""
