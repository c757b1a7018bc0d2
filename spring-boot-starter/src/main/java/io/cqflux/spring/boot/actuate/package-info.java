/**
 * Actuator support of the cqflux starter: the {@code cqflux} health contributor (the instance and
 * one indicator per named peer). Active only when the application has Spring Boot's actuator.
 */
package io.cqflux.spring.boot.actuate;
