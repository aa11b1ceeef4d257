-- The reverse dependency index is derived from forge_issues.depends_on by the database itself: a mirror
-- write is then one statement, and the index can never disagree with the mirror.
CREATE TRIGGER forge_issues_dependencies_insert AFTER INSERT ON forge_issues BEGIN
  INSERT OR IGNORE INTO issue_dependencies (project_id, dependency, dependent)
    SELECT NEW.project_id, value, NEW.number FROM json_each(NEW.depends_on);
END;
--> statement-breakpoint
CREATE TRIGGER forge_issues_dependencies_update AFTER UPDATE OF depends_on ON forge_issues
  WHEN OLD.depends_on IS NOT NEW.depends_on BEGIN
  DELETE FROM issue_dependencies WHERE project_id = NEW.project_id AND dependent = NEW.number;
  INSERT OR IGNORE INTO issue_dependencies (project_id, dependency, dependent)
    SELECT NEW.project_id, value, NEW.number FROM json_each(NEW.depends_on);
END;
