-- Run once by the postgres image on an empty data directory (mounted into
-- /docker-entrypoint-initdb.d by docker-compose.yml): one database per service that owns data.
-- Each service creates its own tables with its migrations on start.
CREATE DATABASE auth;
CREATE DATABASE accounts;
CREATE DATABASE banking;
CREATE DATABASE oms;
